// Package static shows static membership (group.instance.id). A member that
// restarts within the session timeout under the same instance id gets its
// partitions back and nobody else notices: no rebalance, no new generation.
// The same restart without an instance id makes the member leave and rejoin,
// and the group rebalances twice.
package static

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

// Restart is one member's restart, static or not.
type Restart struct {
	Static        bool          `json:"static"`
	Down          time.Duration `json:"down"` // from the member's stop to its start again
	GenBefore     int32         `json:"generation_before"`
	GenAfter      int32         `json:"generation_after"`
	Before, After []int32       `json:"-"`           // the restarted member's partitions
	OtherMoves    int           `json:"other_moves"` // assignments and revocations the other member saw
}

// Result is both restarts.
type Result struct {
	Static, Dynamic Restart
}

// Run restarts a member of a two-member group, with and without an instance id.
func Run(ctx context.Context, cfg brewkit.Config, say func(string)) (Result, error) {
	var res Result
	var err error
	if res.Static, err = restart(ctx, cfg, true, say); err != nil {
		return res, err
	}
	res.Dynamic, err = restart(ctx, cfg, false, say)
	return res, err
}

func restart(ctx context.Context, cfg brewkit.Config, static bool, say func(string)) (Restart, error) {
	r := Restart{Static: static}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return r, err
	}
	defer cl.Close()
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.static.", Partitions: 6})
	if err != nil {
		return r, err
	}
	defer drop(ctx) //nolint:errcheck // leftovers are harmless

	// Orders for the members to read: the group first settles with every
	// one of them read, so that reads which fail do so before the restart.
	rng := rand.New(rand.NewPCG(1, 5))
	recs := make([]*kgo.Record, Orders)
	for i := range recs {
		recs[i] = brewkit.NewOrder(rng, int64(i+1), time.Now()).Record(topic)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return r, fmt.Errorf("writing orders to %s: %w", topic, err)
	}

	var log groups.Log // also ends the waits below when a member fails
	var read atomic.Int64
	emit := func(e groups.Event) {
		if e.Kind == "processed" {
			read.Add(1)
			return
		}
		log.Emit(e)
	}
	snapshot := log.Events
	member := func(name string) groups.Member {
		m := groups.Member{Name: name, Group: topic, Topic: topic, Protocol: groups.Cooperative}
		if static {
			m.InstanceID = "brew-kitchen-" + name
		}
		return m
	}
	runMember := func(m groups.Member) (stop func()) { return log.Go(ctx, cfg, m, emit) }
	owns := func(name string) []int32 { return groups.Owned(snapshot(), name) }
	settled := func() bool { return len(owns("a")) == 3 && len(owns("b")) == 3 }

	stopB := runMember(member("b"))
	defer stopB()
	stopA := runMember(member("a"))
	if err := log.WaitFor(ctx, time.Minute, 100*time.Millisecond, func() bool { return settled() && read.Load() >= Orders }); err != nil {
		stopA()
		return r, fmt.Errorf("a and b did not share the partitions: %w", err)
	}
	if err := log.Sleep(ctx, time.Second); err != nil { // a settled group
		stopA()
		return r, err
	}
	r.Before = owns("a")
	// The group's generation: the newest either member has seen. Under the
	// cooperative protocol the group settles in two rebalances, and the
	// member that gave partitions away may log nothing in the second.
	r.GenBefore = max(lastGeneration(snapshot(), "a"), lastGeneration(snapshot(), "b"))
	mark := len(snapshot())

	kind := map[bool]string{true: "static (group.instance.id)", false: "dynamic"}[static]
	say(fmt.Sprintf("%s: restarting member a, which owns %v", kind, r.Before))
	stopped := time.Now()
	stopA()
	if err := log.Sleep(ctx, RestartTime); err != nil { // a process restart takes a moment
		return r, err
	}
	stopA = runMember(member("a"))
	defer func() { stopA() }()
	r.Down = time.Since(stopped)
	err = log.WaitFor(ctx, time.Minute, 100*time.Millisecond, func() bool {
		ev := snapshot()
		return settled() && lastGeneration(ev, "a") >= r.GenBefore && len(ev) > mark
	})
	if err != nil {
		return r, fmt.Errorf("a did not get partitions back: %w", err)
	}
	if err := log.Sleep(ctx, SessionSettle); err != nil { // anything the coordinator would still do
		return r, err
	}
	ev := snapshot()
	r.After = owns("a")
	r.GenAfter = lastGeneration(ev, "a")
	for _, e := range ev[mark:] {
		if e.Member == "b" {
			r.OtherMoves++
		}
	}
	say(fmt.Sprintf("%s: a back with %v; generation %d -> %d; member b saw %d assignment changes", kind, r.After, r.GenBefore, r.GenAfter, r.OtherMoves))
	return r, nil
}

// Orders is how many orders the group reads before the restart.
const Orders = 30

// RestartTime is how long member a is away: well within the 6 s session timeout.
const RestartTime = 2 * time.Second

// SessionSettle is how long the demo watches after the restart.
const SessionSettle = 2 * time.Second

func lastGeneration(ev []groups.Event, name string) int32 {
	var g int32
	for _, e := range ev {
		if e.Member == name && e.Generation > g {
			g = e.Generation
		}
	}
	return g
}

// Print writes both restarts.
func (r Result) Print(w io.Writer) {
	t := brewkit.NewTable(w, "MEMBER A", "PARTITIONS BEFORE", "AFTER", "GENERATION", "MEMBER B SAW")
	for _, x := range []Restart{r.Static, r.Dynamic} {
		kind := "dynamic"
		if x.Static {
			kind = "static"
		}
		t.Row(kind, fmt.Sprint(x.Before), fmt.Sprint(x.After), fmt.Sprintf("%d -> %d", x.GenBefore, x.GenAfter), fmt.Sprintf("%d changes", x.OtherMoves))
	}
	t.Flush()
}

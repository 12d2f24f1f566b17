// Package static shows static membership (group.instance.id). A member that
// restarts within the session timeout under the same instance id gets its
// partitions back and nobody else notices: no rebalance, no new generation.
// The same restart without an instance id makes the member leave and rejoin,
// and the group rebalances twice.
package staticmember

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

// restart runs members a and b of a group on a fresh topic and restarts a
// within the session timeout, with an instance id when static, and tells
// what a got back and what b saw.
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
	if err := writeOrders(ctx, cl, topic); err != nil {
		return r, err
	}

	p := &pair{cfg: cfg, topic: topic, static: static}
	stopB := p.start(ctx, "b")
	defer stopB()
	stopA := p.start(ctx, "a")
	if err := p.waitShared(ctx); err != nil {
		stopA()
		return r, err
	}
	r.Before = p.owns("a")
	// The group's generation: the newest either member has seen. Under the
	// cooperative protocol the group settles in two rebalances, and the
	// member that gave partitions away may log nothing in the second.
	r.GenBefore = p.generation()
	mark := p.mark()

	kind := map[bool]string{true: "static (group.instance.id)", false: "dynamic"}[static]
	say(fmt.Sprintf("%s: restarting member a, which owns %v", kind, r.Before))
	stopped := time.Now()
	stopA()
	if err := p.log.Sleep(ctx, RestartTime); err != nil { // a process restart takes a moment
		return r, err
	}
	stopA = p.start(ctx, "a")
	defer func() { stopA() }()
	r.Down = time.Since(stopped)
	if err := p.waitBack(ctx, r.GenBefore, mark); err != nil {
		return r, err
	}
	r.After, r.GenAfter, r.OtherMoves = p.since(mark)
	say(fmt.Sprintf("%s: a back with %v; generation %d -> %d; member b saw %d assignment changes", kind, r.After, r.GenBefore, r.GenAfter, r.OtherMoves))
	return r, nil
}

// writeOrders writes Orders orders to topic.
func writeOrders(ctx context.Context, cl *kgo.Client, topic string) error {
	rng := rand.New(rand.NewPCG(1, 5))
	recs := make([]*kgo.Record, Orders)
	for i := range recs {
		recs[i] = brewkit.NewOrder(rng, int64(i+1), time.Now()).Record(topic)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("writing orders to %s: %w", topic, err)
	}
	return nil
}

// pair is one restart's two members, a and b, of the group named after the
// topic, and what they tell.
type pair struct {
	cfg    brewkit.Config
	topic  string
	static bool

	log  groups.Log   // the members' events; also ends the waits when a member fails
	read atomic.Int64 // records the members processed
}

// member is the member called name. A static member has a
// group.instance.id: it does not leave the group as it stops, the
// coordinator keeps its place until the session timeout, and the member
// that comes back with its id gets its partitions back without a
// rebalance. A dynamic one leaves the group as it stops and joins again as
// a new member: the group rebalances twice.
func (p *pair) member(name string) groups.Member {
	m := groups.Member{Name: name, Group: p.topic, Topic: p.topic, Protocol: groups.Cooperative}
	if p.static {
		m.InstanceID = "brew-kitchen-" + name
	}
	return m
}

// start runs member name until stop is called: its client closes, and a
// dynamic member leaves the group (a static one does not).
func (p *pair) start(ctx context.Context, name string) (stop func()) {
	return p.log.Go(ctx, p.cfg, p.member(name), p.emit)
}

// Orders is how many orders the group reads before the restart.
const Orders = 30

// RestartTime is how long member a is away: well within the 6 s session timeout.
const RestartTime = 2 * time.Second

// SessionSettle is how long the demo watches after the restart.
const SessionSettle = 2 * time.Second

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

// Package fanout shows what a consumer group is for. Two groups read one
// topic: notifications with one member and analytics with two. Each group
// sees every order; the two analytics members split the partitions, and so
// the orders. Then a group with more members than partitions leaves one idle.
package fanout

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

// Config is the run.
type Config struct {
	Orders     int
	Partitions int32
	Protocol   groups.Protocol
}

// Defaults: 600 orders on 6 partitions, franz-go's default protocol.
var Defaults = Config{Orders: 600, Partitions: 6, Protocol: groups.Cooperative}

// Member is what one member ended with.
type Member struct {
	Group      string  `json:"group"`
	Partitions []int32 `json:"partitions"`
	Read       int     `json:"read"`
}

// Result is the fan-out and the idle member.
type Result struct {
	Topic      string   `json:"topic"`
	Partitions int32    `json:"partitions"`
	Orders     int      `json:"orders"`
	Members    []Member `json:"members"`
	IdleTopic  string   `json:"idle_topic"`
	Idle       []Member `json:"idle_group"` // four members on three partitions
}

// Run writes the orders and lets the groups read them.
func Run(ctx context.Context, cfg brewkit.Config, c Config) (Result, error) {
	res := Result{Orders: c.Orders, Partitions: c.Partitions}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	var drop, dropIdle func(context.Context) error
	if res.Topic, drop, err = brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.fanout.", Partitions: c.Partitions}); err != nil {
		return res, err
	}
	defer drop(ctx) //nolint:errcheck // leftovers are harmless
	if res.IdleTopic, dropIdle, err = brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.fanout-idle.", Partitions: 3}); err != nil {
		return res, err
	}
	defer dropIdle(ctx) //nolint:errcheck // leftovers are harmless

	// The orders are written once every member owns partitions, so that
	// the split is the groups' doing, not who joined first.
	produce := func() error {
		var recs []*kgo.Record
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 1; i <= c.Orders; i++ {
			recs = append(recs, brewkit.NewOrder(rng, int64(i), time.Now()).Record(res.Topic))
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return fmt.Errorf("writing to %s: %w", res.Topic, err)
		}
		return nil
	}
	res.Members, err = read(ctx, cfg, c.Protocol, res.Topic, int(c.Partitions), c.Orders, []string{"notifications", "analytics", "analytics"}, res.Topic, produce)
	if err != nil {
		return res, err
	}
	res.Idle, err = read(ctx, cfg, c.Protocol, res.IdleTopic, 3, 0, []string{"baristas", "baristas", "baristas", "baristas"}, res.Topic, nil)
	return res, err
}

// read runs one member per entry of groupOf (the group it belongs to); once
// every partition of the topic is owned in every group, and by every member
// where there are enough partitions, it calls produce, then waits until every
// group has read want records. It returns what each member got.
func read(ctx context.Context, cfg brewkit.Config, p groups.Protocol, topic string, partitions, want int, groupOf []string, prefix string, produce func() error) ([]Member, error) {
	ro := newRoster(groupOf)
	var log groups.Log // only for a member's failure, which ends every wait below
	stops := make([]func(), len(groupOf))
	for i, g := range groupOf {
		m := groups.Member{Name: fmt.Sprintf("%d of %s", i, g), Group: prefix + "." + g, Topic: topic, Protocol: p}
		stops[i] = log.Go(ctx, cfg, m, func(e groups.Event) { ro.note(i, e) })
	}
	err := log.WaitFor(ctx, time.Minute, 100*time.Millisecond, func() bool { return ro.settled(partitions, want) })
	if err == nil && produce != nil {
		err = produce()
	}
	if err == nil {
		err = log.WaitFor(ctx, time.Minute, 100*time.Millisecond, func() bool { return ro.done(want) })
	}
	ro.keepOwned() // what each member owns now, before leaving revokes it all

	var left sync.WaitGroup // all leave at once, as one program's end would
	for _, stop := range stops {
		left.Go(stop)
	}
	left.Wait()
	if failed := log.Err(); failed != nil {
		return nil, failed
	}
	if err != nil {
		return nil, fmt.Errorf("the groups did not finish reading %s: %w", topic, err)
	}
	return ro.sorted(), nil
}

// Print writes the result as the README shows it.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "%d orders in %s, %d partitions, read by two groups:\n\n", r.Orders, r.Topic, r.Partitions)
	t := brewkit.NewTable(w, "GROUP", "MEMBER", "PARTITIONS", "READ")
	reads := map[string]int{}
	nth := map[string]int{}
	for _, m := range r.Members {
		reads[m.Group] += m.Read
		nth[m.Group]++
		t.Row(m.Group, nth[m.Group], fmt.Sprint(m.Partitions), m.Read)
	}
	t.Flush()
	fmt.Fprintf(w, "\nnotifications read %d of %d, analytics %d of %d: each group sees every order;\n", reads["notifications"], r.Orders, reads["analytics"], r.Orders)
	fmt.Fprintf(w, "the two analytics members split them by partition.\n")
	fmt.Fprintf(w, "\n4 members of group baristas on %s, 3 partitions:\n\n", r.IdleTopic)
	t = brewkit.NewTable(w, "MEMBER", "PARTITIONS", "STATE")
	for i, m := range r.Idle {
		state := "busy"
		if len(m.Partitions) == 0 {
			state = "idle: more members than partitions (lecture 08: share groups)"
		}
		t.Row(i+1, fmt.Sprint(m.Partitions), state)
	}
	t.Flush()
}

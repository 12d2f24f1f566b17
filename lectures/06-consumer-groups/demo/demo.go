// Package demo is the instructor's rebalance demo in one terminal: member
// processes m1, m2 and m3 join a group one after another while orders flow,
// then m2 leaves; every member's events are printed as they happen, and after
// each step who owns which partition.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

// Partitions is the demo topic's partition count.
const Partitions = 6

// Config is the demo.
type Config struct {
	Member   []string // the command that runs one member process (groups.ServeProcess)
	Protocol groups.Protocol
	Hold     time.Duration // how long each step runs after the group settles
	Rate     int           // orders per second
	Work     time.Duration // time per order
}

// Defaults: cooperative-sticky, 5 s a step, 3 orders a second.
var Defaults = Config{Protocol: groups.Cooperative, Hold: 5 * time.Second, Rate: 3, Work: 100 * time.Millisecond}

// errWrite marks the error of a write that failed.
var errWrite = errors.New("writing orders")

// Step is what the group looked like once a step settled.
type Step struct {
	Title  string             `json:"title"`
	Owners map[string][]int32 `json:"owners"` // member: partitions
}

// Run plays the demo, printing to out.
func Run(ctx context.Context, cfg brewkit.Config, c Config, out io.Writer) ([]Step, error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.demo-rebalance.", Partitions: Partitions})
	if err != nil {
		return nil, err
	}
	defer func() {
		drop(ctx) //nolint:errcheck // a leftover demo topic is harmless
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		adm.DeleteGroup(dctx, topic) //nolint:errcheck // and so is its group
	}()

	var mu sync.Mutex  // out and the log are written from the members' readers
	var log groups.Log // also ends the waits below when a member fails
	emit := func(e groups.Event) {
		log.Emit(e)
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(out, e)
	}
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
	}
	members := map[string]*groups.Process{}
	defer func() {
		for _, p := range members {
			p.Stop(syscall.SIGTERM)
		}
	}()

	// Orders flow the whole time. A write that fails ends the demo: the
	// members would wait for orders that never come.
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	written := func(_ *kgo.Record, err error) {
		if err != nil && pctx.Err() == nil {
			log.Fail(fmt.Errorf("%w to %s: %w", errWrite, topic, err))
		}
	}
	go func() {
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 6))
		tick := time.NewTicker(time.Second / time.Duration(c.Rate))
		defer tick.Stop()
		for n := int64(1); ; n++ {
			select {
			case <-pctx.Done():
				return
			case <-tick.C:
			}
			cl.Produce(pctx, brewkit.NewOrder(rng, n, time.Now()).Record(topic), written)
		}
	}()

	say("group %s on %s (%d partitions, %s), %d orders/s", topic, topic, Partitions, c.Protocol.Label(), c.Rate)
	join := func(name string) error {
		m := groups.Member{Name: name, Group: topic, Topic: topic, Protocol: c.Protocol, Work: c.Work}
		p, err := log.StartProcess(cfg, c.Member, m, emit)
		if err == nil {
			members[name] = p
		}
		return err
	}
	leave := func(name string) error {
		members[name].Stop(syscall.SIGTERM) // a clean exit: the member leaves the group
		delete(members, name)
		return nil
	}
	plan := []struct {
		title string
		do    func() error
	}{
		{"m1 joins", func() error { return join("m1") }},
		{"m2 joins", func() error { return join("m2") }},
		{"m3 joins", func() error { return join("m3") }},
		{"m2 leaves (Ctrl-C: LeaveGroup)", func() error { return leave("m2") }},
	}
	var steps []Step
	for i, st := range plan {
		say("\n== step %d/%d: %s", i+1, len(plan), st.title)
		if err := st.do(); err != nil {
			return steps, err
		}
		live := slices.Sorted(maps.Keys(members))
		var owners map[string][]int32
		// Settled, and orders are read: a group whose reads are not
		// answered fails here, before the demo goes on.
		err := log.WaitFor(ctx, time.Minute, 50*time.Millisecond, func() bool {
			ev := log.Events()
			owners = ownersOf(ev, live)
			return settled(owners, live) && slices.ContainsFunc(ev, processed)
		})
		if errors.Is(err, errWrite) {
			return steps, err // the group is fine; the orders are not
		}
		if err != nil {
			return steps, fmt.Errorf("%s: the group did not settle: %w", st.title, err)
		}
		say("== owners: %s", format(owners, live))
		steps = append(steps, Step{Title: st.title, Owners: owners})
		if err := log.Sleep(ctx, c.Hold); err != nil {
			return steps, err
		}
	}
	say("\n== done: stopping m1 and m3")
	return steps, nil
}

func processed(e groups.Event) bool { return e.Kind == "processed" }

// ownersOf is what each live member owns after the events so far.
func ownersOf(ev []groups.Event, live []string) map[string][]int32 {
	owners := map[string][]int32{}
	for _, m := range live {
		owners[m] = groups.Owned(ev, m)
	}
	return owners
}

// settled: every partition has exactly one live owner, and every live member
// owns some.
func settled(owners map[string][]int32, live []string) bool {
	seen := map[int32]bool{}
	for _, m := range live {
		if len(owners[m]) == 0 {
			return false
		}
		for _, p := range owners[m] {
			if seen[p] {
				return false
			}
			seen[p] = true
		}
	}
	return len(seen) == Partitions
}

func format(owners map[string][]int32, live []string) string {
	var parts []string
	for _, m := range live {
		parts = append(parts, fmt.Sprintf("%s %v", m, owners[m]))
	}
	return strings.Join(parts, "  ")
}

// Package timeline measures what a rebalance costs under each protocol. For
// eager, cooperative-sticky and the consumer protocol in turn it starts two
// member processes on a 6-partition topic while orders flow, adds a third,
// then kills one with SIGKILL, and reads the members' timestamped events: how
// many partitions had no owner in each rebalance and for how long, and how many
// records were processed twice.
package timeline

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

// Config is the run.
type Config struct {
	Member []string      // the command that runs one member printing JSON events; the timeline adds its flags
	Rate   int           // orders per second while the members work
	Settle time.Duration // how long the group works between the steps
}

// Defaults: 100 orders/s, 3 s between the steps.
var Defaults = Config{Rate: 100, Settle: 3 * time.Second}

// Phase is one rebalance.
type Phase struct {
	Paused  int           `json:"partitions_without_owner"`
	Longest time.Duration `json:"longest_without_owner"`
}

// Row is one protocol's run.
type Row struct {
	Protocol       groups.Protocol `json:"protocol"`
	Join           Phase           `json:"join"`
	Kill           Phase           `json:"kill"`
	Killed         []int32         `json:"killed_members_partitions"`
	Produced       int             `json:"produced"`
	Processed      int             `json:"processed"`
	ProcessedTwice int             `json:"processed_twice"`
	Unprocessed    int             `json:"unprocessed"` // produced, never processed: must be 0
}

// Run measures each protocol in turn.
func Run(ctx context.Context, cfg brewkit.Config, c Config, protocols []groups.Protocol, say func(string)) ([]Row, error) {
	var rows []Row
	for _, p := range protocols {
		r, err := runOne(ctx, cfg, c, p, say)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", p, err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func runOne(ctx context.Context, cfg brewkit.Config, c Config, p groups.Protocol, say func(string)) (Row, error) {
	row := Row{Protocol: p}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return row, err
	}
	defer cl.Close()
	run := rand.Uint32() % 1e6
	topic := fmt.Sprintf("brew.timeline.%s.%d", p, run)
	group := topic
	if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.Topic{Name: topic, Partitions: 6, RF: 3, Retention: time.Hour}); err != nil {
		return row, err
	}
	defer adm.DeleteTopics(context.WithoutCancel(ctx), topic) //nolint:errcheck // leftovers are harmless

	var rec groups.Log
	var members []*groups.Process
	defer func() {
		for _, m := range members {
			m.Stop(syscall.SIGKILL)
		}
	}()
	add := func(name string) error {
		m := groups.Member{Name: name, Group: group, Topic: topic, Protocol: p, Work: 2 * time.Millisecond}
		proc, err := groups.StartProcess(cfg, c.Member, m, rec.Emit)
		if err == nil {
			members = append(members, proc)
		}
		return err
	}
	owners := func() map[int32]string { return ownersAt(rec.Events(), time.Now(), nil) }
	settled := func(names ...string) func() bool {
		return func() bool {
			o := owners()
			if len(o) != 6 {
				return false
			}
			for _, n := range names {
				if !slices.Contains(mapsValues(o), n) {
					return false
				}
			}
			return true
		}
	}

	// Orders flow the whole time.
	pctx, stopProducing := context.WithCancel(ctx)
	var produced sync.WaitGroup
	produced.Add(1)
	go func() {
		defer produced.Done()
		rng := rand.New(rand.NewPCG(uint64(run), 6))
		tick := time.NewTicker(time.Second / time.Duration(c.Rate))
		defer tick.Stop()
		for n := int64(1); ; n++ {
			select {
			case <-pctx.Done():
				return
			case <-tick.C:
			}
			if err := cl.ProduceSync(pctx, brewkit.NewOrder(rng, n, time.Now()).Record(topic)).FirstErr(); err == nil {
				row.Produced++
			}
		}
	}()
	defer stopProducing()

	say(fmt.Sprintf("%s: members a and b join %s", p, topic))
	if err := add("a"); err != nil {
		return row, err
	}
	if err := add("b"); err != nil {
		return row, err
	}
	if err := brewkit.WaitFor(ctx, time.Minute, 100*time.Millisecond, settled("a", "b")); err != nil {
		return row, fmt.Errorf("a and b did not share the partitions: %w", err)
	}
	if err := brewkit.Sleep(ctx, c.Settle); err != nil {
		return row, err
	}

	say(fmt.Sprintf("%s: member c joins", p))
	joinAt := time.Now()
	if err := add("c"); err != nil {
		return row, err
	}
	if err := brewkit.WaitFor(ctx, time.Minute, 100*time.Millisecond, settled("a", "b", "c")); err != nil {
		return row, fmt.Errorf("c did not get partitions: %w", err)
	}
	if err := brewkit.Sleep(ctx, c.Settle); err != nil {
		return row, err
	}

	killAt := time.Now()
	row.Killed = ownedBy(owners(), "b")
	say(fmt.Sprintf("%s: member b (partitions %v) killed with SIGKILL", p, row.Killed))
	members[1].Stop(syscall.SIGKILL)
	dead := map[string]time.Time{"b": killAt}
	if err := brewkit.WaitFor(ctx, 2*time.Minute, 100*time.Millisecond, func() bool {
		o := ownersAt(rec.Events(), time.Now(), dead)
		return len(o) == 6
	}); err != nil {
		return row, fmt.Errorf("b's partitions found no new owner: %w", err)
	}
	if err := brewkit.Sleep(ctx, c.Settle); err != nil {
		return row, err
	}
	stopProducing()
	produced.Wait()
	// Let a and c finish the backlog, then stop them cleanly.
	err = brewkit.WaitFor(ctx, time.Minute, 200*time.Millisecond, func() bool {
		return distinctProcessed(rec.Events()) >= row.Produced
	})
	for _, m := range []*groups.Process{members[0], members[2]} {
		m.Stop(syscall.SIGTERM)
	}
	members = nil
	if err != nil {
		return row, fmt.Errorf("the group did not process every order: %w", err)
	}

	ev := rec.Events()
	row.Join = phase(ev, joinAt, killAt, nil)
	row.Kill = phase(ev, killAt, time.Now(), dead)
	seen := map[[2]int64]int{}
	for _, e := range ev {
		if e.Kind == "processed" {
			seen[[2]int64{int64(e.Partition), e.Offset}]++
			row.Processed++
		}
	}
	for _, n := range seen {
		if n > 1 {
			row.ProcessedTwice += n - 1
		}
	}
	row.Unprocessed = row.Produced - len(seen)
	say(fmt.Sprintf("%s: join paused %d partitions (longest %s), kill paused %d (longest %s), %d records processed twice",
		p, row.Join.Paused, row.Join.Longest.Round(time.Millisecond), row.Kill.Paused, row.Kill.Longest.Round(time.Millisecond), row.ProcessedTwice))
	return row, nil
}

// ownersAt replays the assignment events up to t: each partition's owner. A
// member in dead owns nothing from its death on.
func ownersAt(ev []groups.Event, t time.Time, dead map[string]time.Time) map[int32]string {
	slices.SortStableFunc(ev, func(a, b groups.Event) int { return a.At.Compare(b.At) })
	own := map[int32]string{}
	for _, e := range ev {
		if e.At.After(t) {
			break
		}
		switch e.Kind {
		case "assigned":
			for _, p := range e.Partitions {
				own[p] = e.Member
			}
		case "revoked", "lost":
			for _, p := range e.Partitions {
				if own[p] == e.Member {
					delete(own, p)
				}
			}
		}
	}
	for p, m := range own {
		if at, ok := dead[m]; ok && !t.Before(at) {
			delete(own, p)
		}
	}
	return own
}

// phase measures the partitions without an owner between from and to: from
// a revocation, a loss or the owner's death until the next assignment.
func phase(ev []groups.Event, from, to time.Time, dead map[string]time.Time) Phase {
	slices.SortStableFunc(ev, func(a, b groups.Event) int { return a.At.Compare(b.At) })
	var ph Phase
	paused := map[int32]bool{}
	orphaned := map[int32]time.Time{}
	owner := ownersAt(ev, from, nil)
	for p, m := range owner {
		if at, ok := dead[m]; ok && !at.After(from) {
			orphaned[p] = at
			delete(owner, p)
		}
	}
	for _, e := range ev {
		if !e.At.After(from) || e.At.After(to) {
			continue
		}
		switch e.Kind {
		case "revoked", "lost":
			for _, p := range e.Partitions {
				if owner[p] == e.Member {
					delete(owner, p)
					orphaned[p] = e.At
				}
			}
		case "assigned":
			for _, p := range e.Partitions {
				if since, ok := orphaned[p]; ok {
					paused[p] = true
					ph.Longest = max(ph.Longest, e.At.Sub(since))
					delete(orphaned, p)
				}
				owner[p] = e.Member
			}
		}
	}
	ph.Paused = len(paused)
	return ph
}

func ownedBy(o map[int32]string, name string) []int32 {
	var out []int32
	for p, m := range o {
		if m == name {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func mapsValues(o map[int32]string) []string {
	var out []string
	for _, v := range o {
		out = append(out, v)
	}
	return out
}

func distinctProcessed(ev []groups.Event) int {
	seen := map[[2]int64]bool{}
	for _, e := range ev {
		if e.Kind == "processed" {
			seen[[2]int64{int64(e.Partition), e.Offset}] = true
		}
	}
	return len(seen)
}

// Print writes the comparison table.
func Print(w io.Writer, rows []Row) {
	t := brewkit.NewTable(w, "PROTOCOL", "JOINED: PAUSED", "LONGEST", "KILLED: PAUSED", "LONGEST", "PROCESSED TWICE")
	for _, r := range rows {
		t.Row(r.Protocol, r.Join.Paused, r.Join.Longest.Round(10*time.Millisecond), r.Kill.Paused, r.Kill.Longest.Round(10*time.Millisecond), r.ProcessedTwice)
	}
	t.Flush()
}

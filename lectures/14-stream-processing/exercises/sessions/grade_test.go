package sessions

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"

	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
)

// gap is what the grader gives New; shop n is on partition (n-1) mod
// partitions, as the till writes.
const (
	gap        = 5 * time.Minute
	partitions = 3
	shops      = 6
)

const (
	hintMerge = "an order belongs with every session it is less than Gap from: an out-of-order order can extend a session backwards, " +
		"or bridge two sessions, which then become one (the orders of both and the bridge, from the first's Start to the second's End); " +
		"two sessions of a shop are never less than Gap apart (lecture 14: session windows)"
	hintExact = "a gap of exactly Gap splits: orders Gap or more apart are in different sessions, only a gap shorter than Gap joins them " +
		"(compare with >= gap, not > gap) (lecture 14: session windows)"
	hintSums = "when sessions merge, the merged session counts the orders and adds up the cents of all of them, and of the order that bridged them " +
		"(lecture 14: session windows)"
	hintRule = "sort a shop's orders by event time (the payload's \"at\"): a gap of Gap or more ends a session; Start and End are its first and last order's event time " +
		"(lecture 14: session windows)"
)

// write is one order as the till writes it, at its place in the log.
type write struct {
	order till.Order
	when  time.Time // when the till wrote it: its event time, or later for a late one
}

// gaps are what lies between two bursts of a shop; each shop has every kind
// once, in its own order.
const (
	wide         = iota // 12-30 minutes: two sessions
	exact               // exactly gap: two sessions
	under               // gap less a second: one session
	bridged             // 6-9 minutes, a late order in the middle: one session
	halfBridged         // 11-14 minutes, a late order 3 minutes after the first burst: two sessions
	exactBridged        // 2 x gap, a late order in the middle: three sessions
	twoBridges          // 13 minutes, late orders at +9 then +4.5: one session
	kinds
)

// plan draws each shop's orders: bursts of 2-5 orders 10 s to 4 min apart,
// the kinds of gaps between them, and the late orders written after the
// next burst began.
func plan() []write {
	rng := rand.New(rand.NewPCG(14, 5))
	n := int64(0)
	var ws []write
	for shop := 1; shop <= shops; shop++ {
		order := func(at, when time.Time) {
			n++
			e := brewkit.NewOrder(rng, n, at)
			e.ShopID = brewkit.ShopID(shop)
			ws = append(ws, write{order: till.Order{Event: e, Partition: int32(shop-1) % partitions}, when: when})
		}
		at := till.Lunch.Add(time.Duration(rng.IntN(600)) * time.Second)
		burst := func() time.Time { // the burst's orders from at on; returns its last
			k := 2 + rng.IntN(4)
			for i := range k {
				if i > 0 {
					at = at.Add(10*time.Second + time.Duration(rng.IntN(230))*time.Second)
				}
				order(at, at)
			}
			return at
		}
		for i := range kinds {
			end := burst()
			var d time.Duration
			var late []time.Duration // after end, in the order written
			switch (i + shop) % kinds {
			case wide:
				d = 12*time.Minute + time.Duration(rng.IntN(18*60))*time.Second
			case exact:
				d = gap
			case under:
				d = gap - time.Second
			case bridged:
				d = 6*time.Minute + time.Duration(rng.IntN(180))*time.Second
				late = []time.Duration{d / 2}
			case halfBridged:
				d = 11*time.Minute + time.Duration(rng.IntN(180))*time.Second
				late = []time.Duration{3 * time.Minute}
			case exactBridged:
				d = 2 * gap
				late = []time.Duration{gap}
			case twoBridges:
				d = 13 * time.Minute
				late = []time.Duration{9 * time.Minute, 4*time.Minute + 30*time.Second}
			}
			at = end.Add(d)
			for j, l := range late {
				// Written while the next burst is under way.
				order(end.Add(l), at.Add(time.Duration(30+60*j)*time.Second))
			}
		}
		burst()
	}
	// Into the log in the order written; a partition's shops interleave.
	slices.SortStableFunc(ws, func(a, b write) int { return a.when.Compare(b.when) })
	return ws
}

// recount is the batch rule: each shop's orders by event time, split where
// they are gap or more apart.
func recount(orders map[string][]brewkit.Event) map[string][]Session {
	out := map[string][]Session{}
	for shop, es := range orders {
		es = slices.SortedFunc(slices.Values(es), func(a, b brewkit.Event) int { return a.At.Compare(b.At) })
		var ss []Session
		for _, e := range es {
			if len(ss) == 0 || e.At.Sub(ss[len(ss)-1].End) >= gap {
				ss = append(ss, Session{Start: e.At, End: e.At})
			}
			s := &ss[len(ss)-1]
			s.End = e.At
			s.Orders++
			s.Cents += e.Cents
		}
		out[shop] = ss
	}
	return out
}

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := env.FreshTopic(t, "ex-sessions", partitions)

	ws := plan()
	recs := make([]*kgo.Record, len(ws))
	for i, w := range ws {
		recs[i] = w.order.Record(topic)
	}
	cl := env.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("writing the orders: %v", err)
	}

	ends, err := brewkit.EndOffsets(ctx, env.Admin(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	s := New(gap)
	orders := map[string][]brewkit.Event{}
	read := 0
	if err := brewkit.ReadTo(ctx, env.Config, topic, nil, ends, 30*time.Second, func(r *kgo.Record) {
		e, err := till.Decode(r)
		if err != nil {
			t.Fatal(err)
		}
		read++
		orders[e.ShopID] = append(orders[e.ShopID], e)
		s.Add(e.ShopID, e.At, e.Cents)
	}); err != nil {
		t.Fatal(err)
	}
	if read != len(recs) {
		t.Fatalf("read %d orders back from %s, wrote %d", read, topic, len(recs))
	}

	want, got := recount(orders), s.Result()
	for _, shop := range slices.Sorted(maps.Keys(want)) {
		judge(t, shop, want[shop], got[shop], orders[shop])
	}
	if extra := slices.DeleteFunc(slices.Sorted(maps.Keys(got)), func(shop string) bool { _, ok := want[shop]; return ok }); len(extra) > 0 {
		grade.Fail(t, "Result has the shops that had orders, and only them", "Result has sessions of %v, which had no orders", extra)
	}
}

// judge compares one shop's sessions with the recount's and says how they
// differ.
func judge(t *testing.T, shop string, want, got []Session, orders []brewkit.Event) {
	t.Helper()
	if same(want, got) {
		return
	}
	// fail says what is wrong first, then both answers.
	fail := func(hint, format string, args ...any) {
		t.Helper()
		grade.Fail(t, hint, "%s (%d orders): %s; Result gave %s; want %s",
			shop, len(orders), fmt.Sprintf(format, args...), show(got), show(want))
	}
	if len(got) == 0 {
		grade.Fail(t, hintRule, "%s (%d orders): Result has no sessions of it; want %s", shop, len(orders), show(want))
	}
	for i := 1; i < len(got); i++ {
		if got[i].Start.Before(got[i-1].Start) {
			fail("Result gives each shop's sessions in order of Start", "session %d starts before session %d", i+1, i)
		}
	}
	for i := 1; i < len(got); i++ {
		if d := got[i].Start.Sub(got[i-1].End); d < gap {
			how := fmt.Sprintf("only %s apart", d)
			if d < 0 {
				how = "overlapping"
			}
			fail(hintMerge, "sessions %s and %s are %s", span(got[i-1]), span(got[i]), how)
		}
	}
	for i := 1; i < len(want); i++ {
		if want[i].Start.Sub(want[i-1].End) != gap {
			continue
		}
		for _, g := range got {
			if !g.Start.After(want[i-1].End) && !g.End.Before(want[i].Start) {
				fail(hintExact, "session %s joins orders at %s and %s, exactly %s apart",
					span(g), want[i-1].End.Format(time.TimeOnly), want[i].Start.Format(time.TimeOnly), gap)
			}
		}
	}
	if len(want) == len(got) {
		for i := range want {
			if want[i].Start.Equal(got[i].Start) && want[i].End.Equal(got[i].End) && (want[i].Orders != got[i].Orders || want[i].Cents != got[i].Cents) {
				fail(hintSums, "session %s has %d orders and %d cents; want %d orders and %d cents",
					span(got[i]), got[i].Orders, got[i].Cents, want[i].Orders, want[i].Cents)
			}
		}
	}
	fail(hintRule, "its sessions differ from the recount's")
}

func same(want, got []Session) bool {
	return slices.EqualFunc(want, got, func(a, b Session) bool {
		return a.Start.Equal(b.Start) && a.End.Equal(b.End) && a.Orders == b.Orders && a.Cents == b.Cents
	})
}

func span(s Session) string {
	return s.Start.UTC().Format(time.TimeOnly) + "-" + s.End.UTC().Format(time.TimeOnly)
}

func show(ss []Session) string {
	if len(ss) == 0 {
		return "no sessions"
	}
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = fmt.Sprintf("%s %d/%d", span(s), s.Orders, s.Cents)
	}
	return fmt.Sprintf("%d sessions (start-end orders/cents) [%s]", len(ss), strings.Join(parts, ", "))
}

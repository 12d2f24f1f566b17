package dedup

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"

	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
)

// window is what the grader gives New; partitions and shops are the
// topic's (shop n on partition (n-1) mod partitions, as the till writes).
const (
	window     = 10 * time.Minute
	partitions = 3
	shops      = 9
)

const (
	hintRemember = "remember the order id of every order you forward (brewkit.Event's OrderID, from the payload: till.Decode) and drop a record whose id you remember " +
		"(lecture 14: duplicates and idempotent processing)"
	hintLate = "a retry may come minutes of stream time after its original, when the till was offline: remember an order id until the stream time (the newest event time seen) " +
		"is window past its event time, however many orders came since and however little wall-clock time passed (lecture 14: event time, state with a TTL)"
	hintAgain = "the till may retry more than once: an order id stays remembered until the stream time is window past its event time, even after a retry of it came " +
		"(lecture 14: duplicates and idempotent processing)"
	hintArrival = "forget by the order's event time, not by the stream time at which it arrived: a till that was offline sends the orders it kept all at once, " +
		"the oldest far more than window behind the stream time, and counted from their arrival they stay remembered past 2 x window of their event time " +
		"(lecture 14: event time and stream time)"
	hintKey = "two records are the same order only when their order ids are the same: the record's key is the shop, which has many orders; " +
		"take the order id from the payload (till.Decode) (lecture 14: duplicates and idempotent processing)"
	hintMemory = "forget by event time: once the partition's stream time (the newest \"at\" seen in the payloads) is window past an order's event time, drop its id; " +
		"the grader replays three hours of orders in seconds, so the wall clock and the records' timestamps (when they were written) barely move, " +
		"and a fixed number of ids is too many on a quiet afternoon and too few at lunch (lecture 14: state stores with a retention)"
)

// write is one record the grader writes: an order, or a retry of one (copy
// 2 or 3), at its place in the partition's log.
type write struct {
	order till.Order
	copy  int
	after time.Time // the event time the partition had reached when it was written
}

// Each partition has a till that goes offline for the last quarter hour of
// the first rush and the first ten minutes of the afternoon: it keeps its
// orders and writes them when it is back, the oldest 25 minutes behind the
// stream time (none of them retried).
const (
	offlineFrom = 25 * time.Minute
	offlineTo   = 50 * time.Minute
)

// plan draws three hours of orders per partition: a lunch rush (one every
// 4 s), a quiet afternoon (one every 40 s), another rush; 5% of them 5-25 s
// out of order. One order in ten is retried 1-20 s later (one retry in six
// 3-9 minutes later), and a third of the retried ones once more. The first
// shop of each partition is the till that goes offline.
func plan(start time.Time) [][]write {
	rng := rand.New(rand.NewPCG(14, 2))
	phases := []struct {
		length, every time.Duration
	}{{40 * time.Minute, 4 * time.Second}, {80 * time.Minute, 40 * time.Second}, {40 * time.Minute, 4 * time.Second}}
	delay := func() time.Duration {
		if rng.IntN(6) == 0 {
			return 3*time.Minute + time.Duration(rng.IntN(360))*time.Second
		}
		return time.Second + time.Duration(rng.IntN(19_000))*time.Millisecond
	}
	n := int64(0)
	out := make([][]write, partitions)
	for p := range int32(partitions) {
		var ws []write
		at := start
		for _, ph := range phases {
			for end := at.Add(ph.length); at.Before(end); at = at.Add(ph.every) {
				n++
				shop := 1 + int(p) + partitions*rng.IntN(shops/partitions)
				ev := at
				if rng.IntN(20) == 0 {
					ev = at.Add(-5*time.Second - time.Duration(rng.IntN(20_000))*time.Millisecond)
				}
				e := brewkit.NewOrder(rng, n, ev)
				e.ShopID = brewkit.ShopID(shop)
				o := till.Order{Event: e, Partition: p}
				if shop == 1+int(p) && !at.Before(start.Add(offlineFrom)) && at.Before(start.Add(offlineTo)) {
					ws = append(ws, write{order: o, copy: 1, after: start.Add(offlineTo)})
					continue
				}
				ws = append(ws, write{order: o, copy: 1, after: at})
				if rng.IntN(10) == 0 {
					d := delay()
					ws = append(ws, write{order: o, copy: 2, after: at.Add(d)})
					if rng.IntN(3) == 0 {
						ws = append(ws, write{order: o, copy: 3, after: at.Add(d + delay())})
					}
				}
			}
		}
		// Into the log in the order the till wrote them: a retry after the
		// orders placed before it.
		slices.SortStableFunc(ws, func(a, b write) int { return a.after.Compare(b.after) })
		out[p] = ws
	}
	return out
}

// seen is what the grader knows of one order id on its partition.
type seen struct {
	at        time.Time
	arrived   time.Time // the stream time when its first copy was read
	copies    int       // read so far
	forwarded []int     // which copies Forward forwarded
	offsets   []int64
}

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := env.FreshTopic(t, "ex-dedup", partitions)

	// Orders stamped hours ago in their payloads; the records themselves
	// are stamped when written.
	var recs []*kgo.Record
	for _, ws := range plan(till.Lunch) {
		for _, w := range ws {
			recs = append(recs, w.order.Record(topic))
		}
	}
	cl := env.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("writing the orders: %v", err)
	}

	// Read it back: the grader's recount and the operator's input.
	ends, err := brewkit.EndOffsets(ctx, env.Admin(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	read := make([][]*kgo.Record, partitions)
	if err := brewkit.ReadTo(ctx, env.Config, topic, nil, ends, 30*time.Second, func(r *kgo.Record) {
		read[r.Partition] = append(read[r.Partition], r)
	}); err != nil {
		t.Fatal(err)
	}
	if n := len(read[0]) + len(read[1]) + len(read[2]); n != len(recs) {
		t.Fatalf("read %d records back from %s, wrote %d", n, topic, len(recs))
	}

	for p, rs := range read {
		d := New(window)
		ids := map[string]*seen{}
		var order []string // distinct ids in the order first read
		var stream time.Time
		for _, r := range rs {
			e, err := till.Decode(r)
			if err != nil {
				t.Fatal(err)
			}
			s := ids[e.OrderID]
			if s == nil {
				s = &seen{at: e.At}
				ids[e.OrderID] = s
				order = append(order, e.OrderID)
			}
			s.copies++
			s.offsets = append(s.offsets, r.Offset)
			if e.At.After(stream) {
				stream = e.At
			}
			if s.copies == 1 {
				s.arrived = stream
			}
			if s.copies > 1 && stream.Sub(s.at) >= window {
				t.Fatalf("the grader's own stream is wrong: %s's copy %d comes %s of stream time after its event time", e.OrderID, s.copies, stream.Sub(s.at))
			}

			fwd, err := d.Forward(r)
			grade.Failed(t, err, "every record on the topic is an order as the till writes it: till.Decode reads it",
				fmt.Sprintf("Forward(partition %d, offset %d)", p, r.Offset))
			if fwd {
				s.forwarded = append(s.forwarded, s.copies)
			}
			if fwd && len(s.forwarded) == 2 {
				dup(t, p, e.OrderID, s, stream)
			}

			bound := 0
			for _, o := range ids {
				if stream.Sub(o.at) < 2*window {
					bound++
				}
			}
			if l := d.Len(); l > bound {
				hint := hintMemory
				if keptByArrival(ids, stream) {
					hint = hintArrival
				}
				grade.Fail(t, hint,
					"partition %d at offset %d (%d records read, %d distinct orders, stream time %s): Len is %d, and only %d orders are less than 2 x %s behind the stream time",
					p, r.Offset, r.Offset+1, len(order), stream.Format(time.TimeOnly), l, bound, window)
			}
		}
		for _, id := range order {
			if s := ids[id]; len(s.forwarded) == 0 {
				grade.Fail(t, hintKey,
					"partition %d: order %s (event time %s, %s at offsets %v) was never forwarded; %s",
					p, id, s.at.Format(time.TimeOnly), copies(s.copies), s.offsets, tally(ids))
			}
		}
	}
}

// dup fails the grade on the first retry Forward forwarded.
func dup(t *testing.T, p int, id string, s *seen, stream time.Time) {
	t.Helper()
	behind := stream.Sub(s.at)
	what := fmt.Sprintf("partition %d: Forward forwarded order %s twice, copies %d and %d (at offsets %v), the second when the stream time was %s past its event time and %d records after the first",
		p, id, s.forwarded[0], s.forwarded[1], s.offsets, behind.Round(time.Second), s.offsets[s.copies-1]-s.offsets[s.forwarded[0]-1])
	switch {
	case s.forwarded[1] == 3 && s.forwarded[0] == 1:
		grade.Fail(t, hintAgain, "%s; copy 2 was dropped", what)
	case behind >= time.Minute:
		grade.Fail(t, hintLate, "%s", what)
	default:
		grade.Fail(t, hintRemember, "%s", what)
	}
}

func copies(n int) string {
	if n == 1 {
		return "written once"
	}
	return fmt.Sprintf("written %d times", n)
}

// tally says how many orders a partition had and how many Forward forwarded.
func tally(ids map[string]*seen) string {
	forwarded, records := 0, 0
	for _, s := range ids {
		forwarded += len(s.forwarded)
		records += s.copies
	}
	return fmt.Sprintf("of its %d records, %d distinct orders, Forward forwarded %d", records, len(ids), forwarded)
}

// keptByArrival: some order arrived window or more behind the stream time,
// is now 2 x window behind it, and would still be remembered by an operator
// that counts from the arrival.
func keptByArrival(ids map[string]*seen, stream time.Time) bool {
	for _, s := range ids {
		if s.arrived.Sub(s.at) >= window && stream.Sub(s.at) >= 2*window && stream.Sub(s.arrived) < window {
			return true
		}
	}
	return false
}

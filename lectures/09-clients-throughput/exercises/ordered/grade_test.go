package ordered

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const (
	partitions = 6
	orders     = 60
	events     = 10 // per order, numbered 1..events
	total      = orders * events
	together   = 2.0 // events handled at a time, on average, at least
	handleTime = 30 * time.Second
)

const (
	hintOrder  = "a partition's records must be handled one after another: one goroutine per partition at a time, not one per record, and not a second one for the partition's next poll while the first is still at work (lecture 09: consumers, order per partition)"
	hintSlow   = "one loop handles one record at a time: handle each partition's records in a goroutine of its own, side by side (lecture 09: consumers, concurrency across partitions)"
	hintHandle = "poll until ctx ends and call handle for every record, once (lecture 09: consumers)"
)

// kitchen is the grader's handle: it checks order and overlap, and counts.
type kitchen struct {
	mu       sync.Mutex
	rng      *rand.Rand
	last     map[string]int // each order's last event handled
	seen     map[string]bool
	inflight map[int32]int // records of each partition being handled
	handled  int
	twice    int
	// the first of each violation, for the report
	outOfOrder, overlap string
	// how much handling, and from when to when
	busy        time.Duration
	first, done time.Time
	now         int
	most        int
}

func (k *kitchen) handle(r *kgo.Record) {
	seq := seqOf(r)
	k.mu.Lock()
	if k.first.IsZero() {
		k.first = time.Now()
	}
	k.inflight[r.Partition]++
	k.now++
	k.most = max(k.most, k.now)
	if k.inflight[r.Partition] > 1 && k.overlap == "" {
		k.overlap = fmt.Sprintf("%s's event %d (partition %d, offset %d) was handled while another record of partition %d was still being handled",
			r.Key, seq, r.Partition, r.Offset, r.Partition)
	}
	id := fmt.Sprintf("%s/%d", r.Key, seq)
	if k.seen[id] {
		k.twice++
	}
	k.seen[id] = true
	if last := k.last[string(r.Key)]; seq > last+1 && k.outOfOrder == "" {
		k.outOfOrder = fmt.Sprintf("%s's event %d was handled before its event %d", r.Key, seq, last+1)
	}
	k.last[string(r.Key)] = max(k.last[string(r.Key)], seq)
	d := time.Duration(2+k.rng.IntN(7)) * time.Millisecond
	k.mu.Unlock()

	start := time.Now()
	time.Sleep(d)

	k.mu.Lock()
	defer k.mu.Unlock()
	k.busy += time.Since(start)
	k.done = time.Now()
	k.inflight[r.Partition]--
	k.now--
	k.handled++
}

func (k *kitchen) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.handled
}

func seqOf(r *kgo.Record) int {
	for _, h := range r.Headers {
		if h.Key == "seq" {
			n, _ := strconv.Atoi(string(h.Value))
			return n
		}
	}
	return 0
}

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	topic := env.FreshTopic(t, "ex-ordered", partitions)

	// The events, an order's in sequence, written in rounds so that a
	// partition holds many small batches and is read over many polls.
	p := env.Client(t, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0))
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 10))
	for seq := 1; seq <= events; seq++ {
		var round []*kgo.Record
		for o := range orders {
			r := brewkit.NewOrder(rng, int64(o+1), time.Now()).Record(topic)
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: "seq", Value: []byte(strconv.Itoa(seq))})
			round = append(round, r)
		}
		if err := p.ProduceSync(ctx, round...).FirstErr(); err != nil {
			t.Fatalf("writing the events: %v", err)
		}
	}

	k := &kitchen{rng: rng, last: map[string]int{}, seen: map[string]bool{}, inflight: map[int32]int{}}
	cl := env.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxPartitionBytes(2<<10))
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	ended := make(chan error, 1)
	start := time.Now()
	go func() { ended <- Consume(cctx, cl, k.handle) }()
	deadline := time.After(handleTime)
wait:
	for k.count() < total {
		select {
		case err := <-ended:
			grade.Fail(t, hintHandle, "Consume returned %v %s, having handled %d of %d events, before its context ended", err, after(start), k.count(), total)
		case <-deadline:
			break wait
		case <-time.After(50 * time.Millisecond):
		}
	}
	// Give a solution that handles some twice the time to show it.
	time.Sleep(200 * time.Millisecond)
	stop()
	select {
	case err := <-ended:
		if err != nil && !errors.Is(err, context.Canceled) {
			grade.Fail(t, hintHandle, "Consume returned %v when its context ended: a consumer that stops returns nil", err)
		}
	case <-time.After(10 * time.Second):
		grade.Fail(t, hintHandle, "Consume did not return within 10 s after its context ended")
	}

	k.mu.Lock()
	defer k.mu.Unlock()
	wall := k.done.Sub(k.first)
	t.Logf("%d handled (%d twice) in %s, %s of handling: %.1f at a time on average, %d at most", k.handled, k.twice, wall, k.busy, k.busy.Seconds()/wall.Seconds(), k.most)
	switch {
	case k.outOfOrder != "":
		grade.Fail(t, hintOrder, "%s", k.outOfOrder)
	case k.overlap != "":
		grade.Fail(t, hintOrder, "%s", k.overlap)
	case k.handled < total:
		grade.Fail(t, hintHandle, "%d of %d events were handled in %s", k.handled, total, handleTime)
	case k.twice > 0:
		grade.Fail(t, hintHandle, "%d events were handled twice", k.twice)
	case k.busy.Seconds() < together*wall.Seconds():
		grade.Fail(t, hintSlow, "the %d events took %s to handle, %s of handling: %.1f at a time on average, at most %d; want at least %.1f",
			total, wall.Round(time.Millisecond), k.busy.Round(time.Millisecond), k.busy.Seconds()/wall.Seconds(), k.most, together)
	}
}

// after says how long since start, for people.
func after(start time.Time) string {
	if d := time.Since(start); d >= time.Second {
		return "after " + d.Round(100*time.Millisecond).String()
	}
	return "at once"
}

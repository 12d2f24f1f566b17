package orderedcommit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const (
	records = 300
	workers = 8
	stopAt  = 150 // finished records when the first member stops abruptly
)

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	topic := env.FreshTopic(t, "ex-orderedcommit", 3)
	group := "brew.courier.ex-orderedcommit-" + fmt.Sprint(time.Now().UnixNano())

	var recs []*kgo.Record
	for i := range records {
		recs = append(recs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "ord-%04d", i), Value: []byte("{}")})
	}
	if err := env.Client(t).ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("writing the orders: %v", err)
	}

	// The first member: a pool of workers that finish records out of order,
	// a commit of Committable every 50 ms, and an abrupt stop.
	finished := map[string]bool{} // topic/partition@offset
	var mu sync.Mutex
	pool(t, ctx, env.Config, topic, group, finished, &mu)

	// The second member reads on from what the first committed.
	cl, err := brewkit.NewClient(env.Config, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	reread := map[string]bool{}
	deadline := time.Now().Add(20 * time.Second)
	for len(finished)+len(reread) < records && time.Now().Before(deadline) {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		pcancel()
		fs.EachRecord(func(r *kgo.Record) {
			id := fmt.Sprintf("%s/%d@%d", r.Topic, r.Partition, r.Offset)
			if !finished[id] {
				reread[id] = true
			}
		})
	}
	lost := 0
	first := ""
	for _, r := range recs {
		// recs carry their partition and offset since ProduceSync.
		id := fmt.Sprintf("%s/%d@%d", r.Topic, r.Partition, r.Offset)
		if !finished[id] && !reread[id] {
			if lost == 0 {
				first = fmt.Sprintf("partition %d offset %d", r.Partition, r.Offset)
			}
			lost++
		}
	}
	if lost > 0 {
		grade.Fail(t, "commit the lowest offset still in a worker, not past it: a committed offset says every record below it is done",
			"%d orders lost: neither finished by the first member nor read again by the second (first: %s)", lost, first)
	}
}

// pool runs the first member until stopAt records finished, committing
// Committable every 50 ms; it checks each commit against what it knows is
// finished, then stops without a last commit. Once it stops taking records
// it lets its workers finish and checks that Committable covers them all.
func pool(t *testing.T, ctx context.Context, cfg brewkit.Config, topic, group string, finished map[string]bool, mu *sync.Mutex) {
	t.Helper()
	cl, err := brewkit.NewClient(cfg, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	tr := NewTracker()
	inbox := make(chan *kgo.Record, workers)
	var wg sync.WaitGroup
	open := map[int32][]int64{} // started and not finished, per partition
	next := map[int32]int64{}   // the offset after the last started
	rng := rand.New(rand.NewPCG(7, 0))
	delays := make([]time.Duration, records)
	for i := range delays {
		delays[i] = time.Duration(rng.IntN(8)) * time.Millisecond
	}
	for range workers {
		wg.Go(func() {
			for r := range inbox {
				time.Sleep(delays[int(r.Offset)%records]) // a booking's time, uneven
				mu.Lock()
				tr.Finished(r)
				finished[fmt.Sprintf("%s/%d@%d", r.Topic, r.Partition, r.Offset)] = true
				offs := open[r.Partition]
				for i, o := range offs {
					if o == r.Offset {
						open[r.Partition] = append(offs[:i:i], offs[i+1:]...)
						break
					}
				}
				mu.Unlock()
			}
		})
	}
	// check compares a Committable with what is finished: an offset past
	// the lowest unfinished record would lose it.
	check := func(offs map[string]map[int32]kgo.EpochOffset) {
		mu.Lock()
		defer mu.Unlock()
		for p, o := range offs[topic] {
			lowest, ok := next[p], len(open[p]) == 0
			if !ok {
				lowest = open[p][0]
				for _, x := range open[p] {
					lowest = min(lowest, x)
				}
			}
			if o.Offset > lowest {
				grade.Fail(t, "a partition's committable offset is its lowest record still in a worker, when one is",
					"Committable gave partition %d offset %d while offset %d was still in a worker: a crash now loses it", p, o.Offset, lowest)
			}
		}
	}
	commit := func() {
		offs := tr.Committable()
		check(offs)
		if len(offs) > 0 {
			cl.CommitOffsetsSync(ctx, offs, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, _ *kmsg.OffsetCommitResponse, err error) {
				if err != nil {
					t.Errorf("committing: %v", err)
				}
			})
		}
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(30 * time.Second)
poll:
	for time.Now().Before(deadline) {
		mu.Lock()
		done := len(finished)
		mu.Unlock()
		if done >= stopAt {
			break
		}
		pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		fs := cl.PollRecords(pctx, 40)
		pcancel()
		for it := fs.RecordIter(); !it.Done(); {
			r := it.Next()
			mu.Lock()
			tr.Started(r)
			open[r.Partition] = append(open[r.Partition], r.Offset)
			next[r.Partition] = r.Offset + 1
			mu.Unlock()
			select {
			case inbox <- r:
			case <-ctx.Done():
				break poll
			}
			select {
			case <-tick.C:
				commit()
			default:
			}
		}
	}
	// The abrupt stop: no commit after this point reaches Kafka. The
	// workers finish what they hold, and then Committable must cover it.
	close(inbox)
	wg.Wait()
	offs := tr.Committable()
	mu.Lock()
	defer mu.Unlock()
	for p, n := range next {
		if got := offs[topic][p]; got.Offset != n {
			grade.Fail(t, "with nothing in a worker, a partition's committable offset is the one after its last started record",
				"every started record of partition %d is finished, and Committable gives offset %d (want %d): a restart repeats what is done", p, got.Offset, n)
		}
	}
}

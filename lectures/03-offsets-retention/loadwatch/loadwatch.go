// Package loadwatch writes a steady stream of Brew orders while a consumer in
// a group reads and commits them, and reports per partition the log start,
// the log end, the committed offset and the lag. A consumer that starts again
// resumes from the group's committed offsets.
package loadwatch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/03-offsets-retention/offsets"
)

// Config sets up a run.
type Config struct {
	Topic    string
	Group    string
	Rate     int           // orders written per second; 0 writes none
	Work     time.Duration // the consumer's time per order
	Duration time.Duration // 0: until ctx ends
}

// Defaults is what `make run` uses.
var Defaults = Config{Topic: brewkit.Orders.Name, Group: "brew.analytics", Rate: 30, Work: 20 * time.Millisecond}

// Summary is what a run did.
type Summary struct {
	// ResumedFrom is the group's committed offset per partition at start;
	// empty for a group that never committed.
	ResumedFrom map[int32]int64 `json:"resumed_from"`
	// FirstRead is the offset of the first record read per partition.
	FirstRead map[int32]int64     `json:"first_read"`
	Produced  int64               `json:"produced"`
	Consumed  int64               `json:"consumed"`
	Final     []offsets.Partition `json:"final"`
}

// Run writes and reads until ctx ends or c.Duration passes, calling look with
// the offsets about every second. Then the consumer reads what was written
// (for up to drainFor), and on the way out it commits what it processed, so
// the next run resumes there.
func Run(ctx context.Context, cfg brewkit.Config, c Config, say func(string), look func([]offsets.Partition)) (Summary, error) {
	sum := Summary{ResumedFrom: map[int32]int64{}, FirstRead: map[int32]int64{}}
	admCl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return sum, err
	}
	defer admCl.Close()
	if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.TopicNamed(c.Topic, 3)); err != nil {
		return sum, err
	}
	start, err := offsets.Read(ctx, adm, c.Group, c.Topic)
	if err != nil {
		return sum, err
	}
	for _, p := range start {
		if p.Committed >= 0 {
			sum.ResumedFrom[p.ID] = p.Committed
		}
	}
	if len(sum.ResumedFrom) == 0 {
		say(fmt.Sprintf("group %s has no committed offsets on %s: it starts from the earliest offsets (auto.offset.reset=earliest)", c.Group, c.Topic))
	} else {
		say(fmt.Sprintf("group %s resumes from its committed offsets: %s", c.Group, describe(start)))
	}

	// A failed write or fetch ends the run at once, with its error as the
	// cause. Ctrl-C (ctx) and the duration end the writing only: the
	// consumer then reads what was written, so the run stops with nothing
	// left over (a second Ctrl-C quits at once: brewkit.Main).
	run, fail := context.WithCancelCause(context.WithoutCancel(ctx))
	defer fail(nil)
	writing, stopWriting := context.WithCancel(run)
	defer stopWriting()
	context.AfterFunc(ctx, stopWriting)
	if c.Duration > 0 {
		var cancel context.CancelFunc
		writing, cancel = context.WithTimeout(writing, c.Duration)
		defer cancel()
	}
	var produced, consumed atomic.Int64
	var mu sync.Mutex
	written, read := map[int32]int64{}, map[int32]int64{} // the last offset per partition
	var writer sync.WaitGroup
	if c.Rate > 0 {
		prod, err := brewkit.NewClient(cfg, kgo.ProducerLinger(5*time.Millisecond))
		if err != nil {
			return sum, err
		}
		defer prod.Close()
		writer.Add(1)
		go func() {
			defer writer.Done()
			rng := rand.New(rand.NewPCG(rand.Uint64(), 3))
			tick := time.NewTicker(time.Second / time.Duration(c.Rate))
			defer tick.Stop()
			for n := int64(1); ; n++ {
				select {
				case <-writing.Done():
					prod.Flush(run) //nolint:errcheck // counted by the callbacks
					return
				case <-tick.C:
				}
				prod.Produce(run, brewkit.NewOrder(rng, n, time.Now()).Record(c.Topic), func(r *kgo.Record, err error) {
					switch {
					case err == nil:
						produced.Add(1)
						mu.Lock()
						written[r.Partition] = max(written[r.Partition], r.Offset)
						mu.Unlock()
					case !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
						fail(fmt.Errorf("writing to %s: %w", c.Topic, err))
					}
				})
			}
		}()
	}

	cons, err := brewkit.NewClient(cfg,
		kgo.ConsumerGroup(c.Group),
		kgo.ConsumeTopics(c.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitMarks(), // commit only what was processed
		brewkit.ConsumeErrors(),
		kgo.AutoCommitInterval(time.Second),
	)
	if err != nil {
		return sum, err
	}
	reading, stopReading := context.WithCancel(run)
	defer stopReading()
	var reader sync.WaitGroup
	reader.Add(1)
	go func() {
		defer reader.Done()
		var check brewkit.FetchCheck
		for reading.Err() == nil {
			fs := cons.PollFetches(reading)
			if err := check.Err(fs); err != nil {
				fail(err)
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				if reading.Err() != nil {
					return
				}
				mu.Lock()
				if _, ok := sum.FirstRead[r.Partition]; !ok {
					sum.FirstRead[r.Partition] = r.Offset
				}
				mu.Unlock()
				time.Sleep(c.Work) // the analytics job at work
				cons.MarkCommitRecords(r)
				consumed.Add(1)
				mu.Lock()
				read[r.Partition] = max(read[r.Partition], r.Offset)
				mu.Unlock()
			})
		}
	}()

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for writing.Err() == nil {
		select {
		case <-writing.Done():
		case <-tick.C:
			if ps, err := offsets.Read(writing, adm, c.Group, c.Topic); err == nil && look != nil {
				look(ps)
			}
		}
	}
	writer.Wait()
	if run.Err() == nil { // no failure: read the last orders written
		caughtUp := func() bool {
			mu.Lock()
			defer mu.Unlock()
			for p, o := range written {
				if r, ok := read[p]; !ok || r < o {
					return false
				}
			}
			return true
		}
		_ = brewkit.WaitFor(run, drainFor, 20*time.Millisecond, caughtUp) // what is left shows as lag
	}
	stopReading()
	reader.Wait()
	if err := context.Cause(run); err != nil {
		return sum, err
	}
	// Close commits the marked offsets and leaves the group.
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cons.CommitMarkedOffsets(cctx); err != nil {
		return sum, fmt.Errorf("committing on the way out: %w", err)
	}
	cons.Close()
	sum.Produced, sum.Consumed = produced.Load(), consumed.Load()
	sum.Final, err = offsets.Read(cctx, adm, c.Group, c.Topic)
	return sum, err
}

// drainFor bounds how long a run whose duration ended waits for its consumer
// to read the last orders written.
const drainFor = 10 * time.Second

func describe(ps []offsets.Partition) string {
	s := ""
	for _, p := range ps {
		if p.Committed >= 0 {
			s += fmt.Sprintf(" p%d@%d", p.ID, p.Committed)
		}
	}
	return s[1:]
}

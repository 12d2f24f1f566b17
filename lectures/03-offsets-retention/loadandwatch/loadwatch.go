// Package loadwatch writes a steady stream of Brew orders while a consumer in
// a group reads and commits them, and reports per partition the log start,
// the log end, the committed offset and the lag. A consumer that starts again
// resumes from the group's committed offsets.
package loadandwatch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
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
	l := &load{c: c, sum: Summary{ResumedFrom: map[int32]int64{}, FirstRead: map[int32]int64{}}, written: map[int32]int64{}, read: map[int32]int64{}}
	admCl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return l.sum, err
	}
	defer admCl.Close()
	if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.TopicNamed(c.Topic, 3)); err != nil {
		return l.sum, err
	}
	if err := l.resume(ctx, adm, say); err != nil {
		return l.sum, err
	}

	// A failed write or fetch ends the run at once, with its error as the
	// cause. Ctrl-C (ctx) and the duration end the writing only: the
	// consumer then reads what was written, so the run stops with nothing
	// left over (a second Ctrl-C quits at once: brewkit.Main).
	run, fail := context.WithCancelCause(context.WithoutCancel(ctx))
	defer fail(nil)
	l.fail = fail
	writing, stopWriting := writingTime(ctx, run, c.Duration)
	defer stopWriting()

	var writer sync.WaitGroup
	if c.Rate > 0 {
		prod, err := brewkit.NewClient(cfg, kgo.ProducerLinger(5*time.Millisecond))
		if err != nil {
			return l.sum, err
		}
		defer prod.Close()
		writer.Go(func() { l.write(writing, run, prod) })
	}
	cons, err := newConsumer(cfg, c)
	if err != nil {
		return l.sum, err
	}
	reading, stopReading := context.WithCancel(run)
	defer stopReading()
	var reader sync.WaitGroup
	reader.Go(func() { l.consume(reading, cons) })

	l.watch(writing, adm, look)
	writer.Wait()
	if run.Err() == nil { // no failure: read the last orders written
		// What is left shows as lag, unless nothing was read at all: a
		// count of 0 then says nothing about the consumer.
		err := brewkit.WaitFor(run, drainFor, 20*time.Millisecond, l.caughtUp)
		if err != nil && run.Err() == nil && l.consumed.Load() == 0 {
			fail(fmt.Errorf("the consumer read none of the %d orders written, %s after the writing ended: is a node paused or overloaded? `make status` shows the nodes",
				l.produced.Load(), drainFor))
		}
	}
	stopReading()
	reader.Wait()
	if err := context.Cause(run); err != nil {
		return l.sum, err
	}
	return l.commit(adm, cons)
}

// drainFor bounds how long a run whose duration ended waits for its consumer
// to read the last orders written.
const drainFor = 10 * time.Second

// load is what one run's writer, reader and watcher share: the summary and
// the last offset written and read per partition.
type load struct {
	c    Config
	fail context.CancelCauseFunc // ends the run with a write's or a fetch's error

	produced, consumed atomic.Int64

	mu            sync.Mutex // guards the maps below and sum.FirstRead
	sum           Summary
	written, read map[int32]int64
}

// resume notes where the group's committed offsets have it start, and says so.
func (l *load) resume(ctx context.Context, adm *kadm.Client, say func(string)) error {
	start, err := offsets.Read(ctx, adm, l.c.Group, l.c.Topic)
	if err != nil {
		return err
	}
	for _, p := range start {
		if p.Committed >= 0 {
			l.sum.ResumedFrom[p.ID] = p.Committed
		}
	}
	if len(l.sum.ResumedFrom) == 0 {
		say(fmt.Sprintf("group %s has no committed offsets on %s: it starts from the earliest offsets (auto.offset.reset=earliest)", l.c.Group, l.c.Topic))
	} else {
		say(fmt.Sprintf("group %s resumes from its committed offsets: %s", l.c.Group, describe(start)))
	}
	return nil
}

// writingTime returns the context the writing runs in: it ends with ctx
// (Ctrl-C), after d (if d > 0), or when run ends (a failure).
func writingTime(ctx, run context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	writing, stop := context.WithCancel(run)
	context.AfterFunc(ctx, stop)
	if d <= 0 {
		return writing, stop
	}
	writing, cancel := context.WithTimeout(writing, d)
	return writing, func() { cancel(); stop() }
}

// write produces c.Rate orders a second until writing ends, then flushes
// what is buffered (unless run ends first).
func (l *load) write(writing, run context.Context, prod *kgo.Client) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 3))
	tick := time.NewTicker(time.Second / time.Duration(l.c.Rate))
	defer tick.Stop()
	for n := int64(1); ; n++ {
		select {
		case <-writing.Done():
			prod.Flush(run) //nolint:errcheck // counted by the callbacks
			return
		case <-tick.C:
		}
		prod.Produce(run, brewkit.NewOrder(rng, n, time.Now()).Record(l.c.Topic), l.countWrite)
	}
}

// countWrite is the producer's callback: it counts an acknowledged order,
// and a failed write ends the run.
func (l *load) countWrite(r *kgo.Record, err error) {
	switch {
	case err == nil:
		l.produced.Add(1)
		l.mu.Lock()
		l.written[r.Partition] = max(l.written[r.Partition], r.Offset)
		l.mu.Unlock()
	case !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
		l.fail(fmt.Errorf("writing to %s: %w", l.c.Topic, err))
	}
}

// newConsumer joins the group, starting where it committed (the earliest
// offsets for a new group) and committing only what was processed.
func newConsumer(cfg brewkit.Config, c Config) (*kgo.Client, error) {
	return brewkit.NewClient(cfg,
		kgo.ConsumerGroup(c.Group),
		kgo.ConsumeTopics(c.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitMarks(), // commit only what was processed
		kgo.KeepRetryableFetchErrors(),
		kgo.AutoCommitInterval(time.Second),
	)
}

// consume reads and processes orders until reading ends, marking each one
// processed for the next commit; a fetch error ends the run.
func (l *load) consume(reading context.Context, cons *kgo.Client) {
	var check brewkit.FetchCheck
	for reading.Err() == nil {
		fs, err := check.Poll(reading, cons, 0)
		if err != nil {
			l.fail(err)
			return
		}
		fs.EachRecord(func(r *kgo.Record) {
			if reading.Err() != nil {
				return
			}
			l.mu.Lock()
			if _, ok := l.sum.FirstRead[r.Partition]; !ok {
				l.sum.FirstRead[r.Partition] = r.Offset
			}
			l.mu.Unlock()
			time.Sleep(l.c.Work) // the analytics job at work
			cons.MarkCommitRecords(r)
			l.consumed.Add(1)
			l.mu.Lock()
			l.read[r.Partition] = max(l.read[r.Partition], r.Offset)
			l.mu.Unlock()
		})
	}
}

// watch calls look with the group's offsets every second until writing ends.
func (l *load) watch(writing context.Context, adm *kadm.Client, look func([]offsets.Partition)) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for writing.Err() == nil {
		select {
		case <-writing.Done():
		case <-tick.C:
			if ps, err := offsets.Read(writing, adm, l.c.Group, l.c.Topic); err == nil && look != nil {
				look(ps)
			}
		}
	}
}

// caughtUp reports whether the consumer has read every order written.
func (l *load) caughtUp() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, o := range l.written {
		if r, ok := l.read[p]; !ok || r < o {
			return false
		}
	}
	return true
}

// commit commits what the consumer processed, leaves the group, and fills
// in the summary with the counts and the offsets the next run starts from.
func (l *load) commit(adm *kadm.Client, cons *kgo.Client) (Summary, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cons.CommitMarkedOffsets(ctx); err != nil {
		return l.sum, fmt.Errorf("committing on the way out: %w", err)
	}
	cons.Close()
	l.sum.Produced, l.sum.Consumed = l.produced.Load(), l.consumed.Load()
	var err error
	l.sum.Final, err = offsets.Read(ctx, adm, l.c.Group, l.c.Topic)
	return l.sum, err
}

func describe(ps []offsets.Partition) string {
	s := ""
	for _, p := range ps {
		if p.Committed >= 0 {
			s += fmt.Sprintf(" p%d@%d", p.ID, p.Committed)
		}
	}
	return s[1:]
}

// Package backpressure is courier-service with a local queue between its poll
// loop and the workers that book at the partner, in two modes:
//
//   - bounded: the queue holds at most Queue records. When it is full (the
//     partner got slow, so the workers drain it slowly) the loop pauses
//     fetching on every assigned partition (kgo's PauseFetchPartitions) and
//     resumes (ResumeFetchPartitions) once the workers have drained it to
//     Low. The backlog stays in Kafka, as lag; the process's memory stays
//     flat, and the group sees nothing: franz-go heartbeats beside the loop.
//   - unbounded: the loop polls as fast as it can into a queue without a
//     limit. The backlog moves into the process's memory.
//
// Both commit in order what the workers booked (each partition up to its
// lowest unbooked record), so their lag is the same: what differs is where
// the backlog waits. The same courier stops gracefully (Run's ctx ends): it
// stops polling, books what it holds, commits, and leaves the group; package
// shutdown measures that against a SIGKILL.
//
// franz-go's pause, read in its source (pkg/kgo, v1.22): a paused partition
// is left out of every fetch request, and at the next poll its records
// already buffered are dropped without moving its fetch offset, so they are
// fetched again after the resume: nothing is lost, nothing is returned while
// paused. Without a pause, a consumer that stops polling fetches ahead at
// most one response per broker (a source fetches again only once its
// buffered fetch is taken), so kgo's own buffer is bounded either way; the
// unbounded queue is the program's own.
package backpressure

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/10-processing-failures/courier"
	"github.com/brew-course/kafka/lectures/10-processing-failures/ordered"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// FetchPartitionBytes is the courier's max.partition.fetch.bytes (kgo's
// default is 1 MiB): a fetch response brings at most this much of each
// partition, at least one batch.
const FetchPartitionBytes = 256 << 10

// Courier is one courier-service process's consumer.
type Courier struct {
	Topic, Group string
	Partner      *partner.Client
	Workers      int
	// Queue bounds the local queue (bounded mode); 0 makes it unbounded.
	Queue int
	// Low is where a paused loop resumes: the queue drained to this many.
	Low int
	// CommitEvery is how often the loop commits what is booked.
	CommitEvery time.Duration
	// Drain bounds a graceful stop's booking of what the queue holds; what
	// is left then stays uncommitted, for the next instance.
	Drain time.Duration
	// SessionTimeout is the group session's (0: kgo's 45 s): how long the
	// group waits for a member that died without leaving.
	SessionTimeout time.Duration
	// SampleEvery is how often Report gets a sample (0: 100 ms).
	SampleEvery time.Duration
	// Reads makes Report get every record handed to the queue.
	Reads bool
	// Report gets what the courier does; calls come from several goroutines
	// one at a time.
	Report func(Report)
}

// Run consumes until ctx ends, then stops gracefully: no more polls, the
// queue booked (within Drain), what is booked committed, the group left.
func (c *Courier) Run(ctx context.Context, cfg brewkit.Config) error {
	if c.Workers < 1 {
		return errors.New("a courier needs at least one worker")
	}
	r := &run{c: c, marks: ordered.New(), q: newFIFO(), assigned: map[string][]int32{}, tell: c.teller()}
	cl, err := brewkit.NewClient(cfg, r.opts()...)
	if err != nil {
		return err
	}
	r.cl = cl
	closed := false
	defer func() {
		if !closed {
			cl.Close() // a failed run still leaves the group
		}
	}()

	// The workers book what the loop queues, until the queue is closed and
	// empty, or abandon ends a graceful stop's drain.
	booker := courier.Booker{Partner: c.Partner, Idempotent: true}
	bookCtx, abandon := context.WithCancel(context.WithoutCancel(ctx))
	defer abandon()
	var workers sync.WaitGroup
	for range c.Workers {
		workers.Go(func() { r.work(bookCtx, booker) })
	}
	stopSampling := r.sampleEvery(c.SampleEvery)
	defer stopSampling()
	// The stop begins with the signal (ctx's end), not when the loop sees
	// it: what the workers book from then on is the drain.
	signalled := context.AfterFunc(ctx, func() { r.stopping.Store(true) })
	defer signalled()

	loopErr := r.loop(ctx)

	// The stop: no more polls; the workers book what the queue holds, up
	// to Drain; what they booked is committed; Close leaves the group.
	stopAt := time.Now()
	r.stopping.Store(true)
	r.q.close()
	drained := make(chan struct{})
	go func() { workers.Wait(); close(drained) }()
	drain := c.Drain
	if loopErr != nil {
		drain = 0
	}
	select {
	case <-drained:
	case <-time.After(drain):
		abandon()
		<-drained
	}
	cctx, cancel := context.WithTimeout(context.Background(), cfg.Bound())
	defer cancel()
	cerr := ordered.Commit(cctx, cl, r.marks, nil)
	cl.Close()
	closed = true
	stopSampling()
	r.stopped(stopAt)
	if loopErr != nil {
		return loopErr
	}
	if cerr != nil {
		return fmt.Errorf("the last commit: %w", cerr)
	}
	return nil
}

// run is what one Run's poll loop, workers and rebalance callbacks share.
type run struct {
	c     *Courier
	cl    *kgo.Client
	marks *ordered.Marks // per partition, what is taken and what is booked
	q     *fifo          // the local queue between the loop and the workers
	tell  func(Report)

	stopping, paused           atomic.Bool
	revoked, booked, pauses    atomic.Int64
	bookedAfterStop, abandoned atomic.Int64
	assignMu                   sync.Mutex
	assigned                   map[string][]int32
	firstAssign                sync.Once
}

// opts are the courier's client options: a group member that commits
// itself, and the rebalance callbacks that keep the paused set and hand
// back what is booked.
func (r *run) opts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.ConsumerGroup(r.c.Group), kgo.ConsumeTopics(r.c.Topic),
		kgo.DisableAutoCommit(), kgo.KeepRetryableFetchErrors(),
		kgo.OnPartitionsAssigned(r.assign),
		kgo.OnPartitionsRevoked(r.handBack),
		kgo.OnPartitionsLost(r.handBack),
		// kgo keeps at most one fetch response per broker, each up to
		// FetchPartitionBytes a partition: part of the memory bound.
		kgo.FetchMaxPartitionBytes(FetchPartitionBytes),
	}
	if r.c.SessionTimeout > 0 {
		opts = append(opts, kgo.SessionTimeout(r.c.SessionTimeout), kgo.HeartbeatInterval(r.c.SessionTimeout/6))
	}
	return opts
}

// loop polls into the queue until ctx ends or a poll or commit fails. A
// bounded queue pauses fetching when it is full and resumes at Low.
func (r *run) loop(ctx context.Context) error {
	var fc brewkit.FetchCheck
	lastCommit := time.Now()
	for ctx.Err() == nil {
		take := 0 // unbounded: all that is buffered
		wait := 100 * time.Millisecond
		if r.c.Queue > 0 {
			n := r.q.len()
			switch {
			case !r.paused.Load() && n >= r.c.Queue:
				r.pause()
			case r.paused.Load() && n <= r.c.Low:
				r.resume()
			}
			take = r.c.Queue - n
			if r.paused.Load() {
				// Paused polls return nothing of the paused partitions
				// and drop what kgo buffered of them; a short one, so
				// that the resume comes as soon as the queue is low.
				wait = 10 * time.Millisecond
			}
			if take <= 0 {
				r.q.waitPop(ctx, 50*time.Millisecond)
				continue
			}
		}
		pctx, cancel := context.WithTimeout(ctx, wait)
		fs, err := fc.Poll(pctx, r.cl, take)
		cancel()
		if err != nil && ctx.Err() == nil {
			return err
		}
		recs := fs.Records()
		for _, rec := range recs {
			r.marks.Take(rec)
			r.read(rec)
		}
		r.q.push(recs)
		if time.Since(lastCommit) >= r.c.CommitEvery {
			if err := ordered.Commit(ctx, r.cl, r.marks, nil); err != nil && ctx.Err() == nil {
				return err
			}
			lastCommit = time.Now()
		}
	}
	return nil
}

// pause stops fetching every assigned partition: the backlog stays in Kafka.
func (r *run) pause() {
	r.assignMu.Lock()
	defer r.assignMu.Unlock()
	r.paused.Store(true)
	r.pauses.Add(1)
	r.cl.PauseFetchPartitions(r.assigned)
}

// resume fetches again every partition that is paused.
func (r *run) resume() {
	r.assignMu.Lock()
	defer r.assignMu.Unlock()
	r.paused.Store(false)
	r.cl.ResumeFetchPartitions(r.cl.PauseFetchPartitions(nil)) // nil adds none and returns every paused one
}

// work is one worker: it books what it pops, and marks it booked for the
// ordered commit; it returns when the queue is closed and empty, or when
// ctx ends (the rest is left unbooked and uncommitted).
func (r *run) work(ctx context.Context, booker courier.Booker) {
	for {
		rec, ok := r.q.pop()
		if !ok {
			return
		}
		if ctx.Err() != nil || !book(ctx, booker, rec) {
			r.abandoned.Add(1)
			return
		}
		r.marks.Finish(rec)
		r.booked.Add(1)
		if r.stopping.Load() {
			r.bookedAfterStop.Add(1)
		}
	}
}

// assign is a rebalance giving partitions: a paused loop takes them paused.
func (r *run) assign(_ context.Context, cl *kgo.Client, got map[string][]int32) {
	r.assignMu.Lock()
	n := 0
	for t, ps := range got {
		r.assigned[t] = append(r.assigned[t], ps...)
		n += len(ps)
	}
	if r.paused.Load() {
		cl.PauseFetchPartitions(got)
	}
	r.assignMu.Unlock()
	r.firstAssign.Do(func() { r.tell(Report{Kind: "assigned", Partitions: n}) })
}

// handBack is a rebalance taking partitions away: what is booked of them is
// committed (the new owner starts after it), and they are forgotten.
func (r *run) handBack(ctx context.Context, cl *kgo.Client, lost map[string][]int32) {
	if !r.stopping.Load() {
		for _, ps := range lost {
			r.revoked.Add(int64(len(ps)))
		}
	}
	ordered.Commit(ctx, cl, r.marks, lost) //nolint:errcheck // the new owner re-reads what did not commit; the key keeps it one booking
	r.marks.Forget(lost)
	r.assignMu.Lock()
	defer r.assignMu.Unlock()
	for t, ps := range lost {
		r.assigned[t] = slices.DeleteFunc(r.assigned[t], func(p int32) bool { return slices.Contains(ps, p) })
	}
}

// book books r, retrying a retriable failure every 100 ms; a poison record
// is skipped (lecture's retry-topics dead-letters it). It returns false when
// ctx ended first.
func book(ctx context.Context, b courier.Booker, r *kgo.Record) bool {
	for {
		err := b.Book(ctx, r)
		switch courier.Classify(ctx, err) {
		case courier.Done, courier.Poison:
			return true
		case courier.Stopped:
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

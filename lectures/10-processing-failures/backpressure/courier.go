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
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/lectures/10-processing-failures/courier"
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

// Report is one thing a courier tells: a sample of its state, its first
// assignment, a record it read, its stop.
type Report struct {
	Kind string `json:"kind"` // assigned, sample, read, stopped

	// sample, stopped
	Queue   int   `json:"queue"`
	Paused  bool  `json:"paused,omitempty"`
	Pauses  int   `json:"pauses,omitempty"`  // times the loop paused fetching
	Booked  int64 `json:"booked"`            // bookings the partner confirmed
	Revoked int   `json:"revoked,omitempty"` // partitions taken away while running (rebalances)
	RSS     int64 `json:"rss,omitempty"`     // VmRSS, bytes (Linux)
	PeakRSS int64 `json:"peak_rss,omitempty"`

	// assigned
	Partitions int `json:"partitions,omitempty"`

	// read
	Order     string `json:"order,omitempty"`
	Partition int32  `json:"p,omitempty"`
	Offset    int64  `json:"o,omitempty"`

	// stopped: what the graceful stop did
	Drained   int           `json:"drained,omitempty"`   // records booked after the stop began
	Abandoned int           `json:"abandoned,omitempty"` // records left unbooked when Drain ran out
	Took      time.Duration `json:"took,omitempty"`      // from the stop to the group left
}

// Run consumes until ctx ends, then stops gracefully: no more polls, the
// queue booked (within Drain), what is booked committed, the group left.
func (c *Courier) Run(ctx context.Context, cfg brewkit.Config) error {
	if c.Workers < 1 {
		return errors.New("a courier needs at least one worker")
	}
	report := c.Report
	if report == nil {
		report = func(Report) {}
	}
	var mu sync.Mutex // one report at a time
	tell := func(r Report) {
		mu.Lock()
		defer mu.Unlock()
		report(r)
	}

	marks := newMarks()
	var (
		stopping  atomic.Bool
		revoked   atomic.Int64
		booked    atomic.Int64
		pauses    atomic.Int64
		paused    atomic.Bool
		assigned  = map[string][]int32{}
		assignMu  sync.Mutex
		firstOnce sync.Once
	)
	var cl *kgo.Client
	opts := []kgo.Opt{
		kgo.ConsumerGroup(c.Group), kgo.ConsumeTopics(c.Topic),
		kgo.DisableAutoCommit(), brewkit.ConsumeErrors(),
		kgo.OnPartitionsAssigned(func(_ context.Context, cl *kgo.Client, got map[string][]int32) {
			assignMu.Lock()
			n := 0
			for t, ps := range got {
				assigned[t] = append(assigned[t], ps...)
				n += len(ps)
			}
			if paused.Load() {
				cl.PauseFetchPartitions(got) // a paused loop takes new partitions paused
			}
			assignMu.Unlock()
			firstOnce.Do(func() { tell(Report{Kind: "assigned", Partitions: n}) })
		}),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, lost map[string][]int32) {
			c.handBack(ctx, cl, marks, lost, &stopping, &revoked, assigned, &assignMu)
		}),
		kgo.OnPartitionsLost(func(ctx context.Context, cl *kgo.Client, lost map[string][]int32) {
			c.handBack(ctx, cl, marks, lost, &stopping, &revoked, assigned, &assignMu)
		}),
	}
	// kgo keeps at most one fetch response per broker, each up to
	// FetchPartitionBytes a partition: part of the memory bound.
	opts = append(opts, kgo.FetchMaxPartitionBytes(FetchPartitionBytes))
	if c.SessionTimeout > 0 {
		opts = append(opts, kgo.SessionTimeout(c.SessionTimeout), kgo.HeartbeatInterval(c.SessionTimeout/6))
	}
	cl, err := brewkit.NewClient(cfg, opts...)
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			cl.Close() // a failed run still leaves the group
		}
	}()

	q := newFIFO()
	booker := courier.Booker{Partner: c.Partner, Idempotent: true}
	bookCtx, abandon := context.WithCancel(context.WithoutCancel(ctx))
	defer abandon()
	var workers sync.WaitGroup
	var afterStop, abandoned atomic.Int64
	for range c.Workers {
		workers.Go(func() {
			for {
				r, ok := q.pop()
				if !ok {
					return
				}
				if bookCtx.Err() != nil || !book(bookCtx, booker, r) {
					abandoned.Add(1) // left unbooked and uncommitted
					return
				}
				marks.finish(r)
				booked.Add(1)
				if stopping.Load() {
					afterStop.Add(1)
				}
			}
		})
	}

	every := c.SampleEvery
	if every <= 0 {
		every = 100 * time.Millisecond
	}
	sample := func(kind string) Report {
		rss, peak := ReadRSS()
		return Report{Kind: kind, Queue: q.len(), Paused: paused.Load(), Pauses: int(pauses.Load()),
			Booked: booked.Load(), Revoked: int(revoked.Load()), RSS: rss, PeakRSS: peak}
	}
	sampling, stopSampling := context.WithCancel(context.Background())
	var sampler sync.WaitGroup
	sampler.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-sampling.Done():
				return
			case <-t.C:
				tell(sample("sample"))
			}
		}
	})
	defer func() { stopSampling(); sampler.Wait() }()

	commit := func(ctx context.Context) error { return commitMarks(ctx, cl, marks, nil) }
	pause := func() {
		assignMu.Lock()
		defer assignMu.Unlock()
		paused.Store(true)
		pauses.Add(1)
		cl.PauseFetchPartitions(assigned)
	}
	resume := func() {
		assignMu.Lock()
		defer assignMu.Unlock()
		paused.Store(false)
		cl.ResumeFetchPartitions(cl.PauseFetchPartitions(nil)) // every paused partition
	}

	var fc brewkit.FetchCheck
	lastCommit := time.Now()
	var loopErr error
	for ctx.Err() == nil {
		take := 0 // unbounded: all that is buffered
		wait := 100 * time.Millisecond
		if c.Queue > 0 {
			n := q.len()
			switch {
			case !paused.Load() && n >= c.Queue:
				pause()
			case paused.Load() && n <= c.Low:
				resume()
			}
			take = c.Queue - n
			if paused.Load() {
				// Paused polls return nothing of the paused partitions
				// and drop what kgo buffered of them; a short one, so
				// that the resume comes as soon as the queue is low.
				wait = 10 * time.Millisecond
			}
			if take <= 0 {
				q.waitPop(ctx, 50*time.Millisecond)
				continue
			}
		}
		pctx, cancel := context.WithTimeout(ctx, wait)
		fs, err := fc.Poll(pctx, cl, take)
		cancel()
		if err != nil && ctx.Err() == nil {
			loopErr = err
			break
		}
		recs := fs.Records()
		for _, r := range recs {
			marks.take(r)
			if c.Reads {
				ev, _ := courier.Decode(r)
				tell(Report{Kind: "read", Order: ev.OrderID, Partition: r.Partition, Offset: r.Offset})
			}
		}
		q.push(recs)
		if time.Since(lastCommit) >= c.CommitEvery {
			if err := commit(ctx); err != nil && ctx.Err() == nil {
				loopErr = err
				break
			}
			lastCommit = time.Now()
		}
	}

	// The stop: no more polls; the workers book what the queue holds, up
	// to Drain; what they booked is committed; Close leaves the group.
	stopAt := time.Now()
	stopping.Store(true)
	q.close()
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
	cerr := commit(cctx)
	cl.Close()
	closed = true
	stopSampling()
	sampler.Wait()
	r := sample("stopped")
	r.Drained, r.Abandoned, r.Took = int(afterStop.Load()), int(abandoned.Load())+q.len(), time.Since(stopAt)
	tell(r)
	if loopErr != nil {
		return loopErr
	}
	if cerr != nil {
		return fmt.Errorf("the last commit: %w", cerr)
	}
	return nil
}

// handBack is a rebalance taking partitions away: what is booked of them is
// committed (the new owner starts after it), and they are forgotten.
func (c *Courier) handBack(ctx context.Context, cl *kgo.Client, m *marks, lost map[string][]int32,
	stopping *atomic.Bool, revoked *atomic.Int64, assigned map[string][]int32, mu *sync.Mutex) {
	if !stopping.Load() {
		for _, ps := range lost {
			revoked.Add(int64(len(ps)))
		}
	}
	commitMarks(ctx, cl, m, lost) //nolint:errcheck // the new owner re-reads what did not commit; the key keeps it one booking
	m.forget(lost)
	mu.Lock()
	defer mu.Unlock()
	for t, ps := range lost {
		keep := assigned[t][:0]
		for _, p := range assigned[t] {
			if !contains(ps, p) {
				keep = append(keep, p)
			}
		}
		assigned[t] = keep
	}
}

func contains(ps []int32, p int32) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
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

// commitMarks commits, for each partition (of only, when not nil), the
// offset of its lowest unbooked record.
func commitMarks(ctx context.Context, cl *kgo.Client, m *marks, only map[string][]int32) error {
	offs := m.committable(only)
	if len(offs) == 0 {
		return nil
	}
	var cerr error
	defer func() {
		if cerr != nil {
			m.unsend(offs) // the next commit sends them again
		}
	}()
	cl.CommitOffsetsSync(ctx, offs, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			cerr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil && cerr == nil {
					cerr = fmt.Errorf("committing %s/%d: %w", t.Topic, p.Partition, err)
				}
			}
		}
	})
	return cerr
}

// Package naive is the courier most first versions are: it books each order
// inside the poll loop and, when the partner fails, retries right there,
// forever, with a short sleep. It measures what that does: to the partner
// (calls during an outage), to every partition the consumer owns (all of them
// wait for one record), to the group (nothing: franz-go heartbeats beside the
// loop, so the group never notices), and with a poison record (the loop never
// gets past it; a service that crashes on it crash-loops on the same offset).
package naive

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/10-processing-failures/courier"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Options set up a run.
type Options struct {
	Topic    string
	Run      string        // names the orders and the group (courier.Batch)
	Orders   int           // orders written for the run
	Poison   int           // the index of the poison order among them; < 0: none
	Outage   time.Duration // the partner answers 503 for this long from the start
	Backoff  time.Duration // the naive loop's sleep between two tries of one record
	Watch    time.Duration // how long the run goes on after the outage
	Restarts int           // > 0: the courier crashes on the poison record and is restarted this many times
	Partner  *partner.Client
	// Progress, when set, gets a line a second.
	Progress func(Second)
}

// Defaults are the lecture's run: 60 orders, one poison, a 5 s outage.
var Defaults = Options{Topic: courier.Orders, Orders: 60, Poison: 45, Outage: 5 * time.Second,
	Backoff: 100 * time.Millisecond, Watch: 5 * time.Second}

// Second is one second of the run, for progress.
type Second struct {
	At     time.Duration
	Calls  int64 // partner calls so far
	Booked int64
	Lag    int64 // the group's lag on the topic
}

// Result is what the run measured.
type Result struct {
	Orders, Partitions int
	Outage             time.Duration
	CallsInOutage      int64 // booking calls made while the partner was down
	BookedInOutage     int64
	LagInOutage        int64   // a second before the partner came back
	StalledPartitions  int     // partitions with unbooked orders that got no booking during the outage
	Booked             int64   // by the end
	Lag                int64   // by the end: orders the courier never got to
	StuckOn            string  // the record the loop was retrying at the end: partition@offset
	StuckError         string  // why it does not book
	StuckAttempts      int64   // tries of that one record
	CallsTotal         int64   // booking calls made by the end
	Members            int     // the group's members at the end
	Revoked            int     // partitions taken from the courier during the run (rebalances)
	Crashes            []Crash // with Restarts: each crash
	BookedTwice        int     // orders the partner booked more than once

	stuckPartition int32
	stuckOffset    int64
}

// Calls is how many booking calls the courier made.
func (r Result) Calls() int64 { return r.CallsTotal }

// Crash is one crash of the courier on the poison record.
type Crash struct {
	Partition int32
	Offset    int64
	Committed int64 // the group's committed offset of that partition after the crash
}

// errCrash is the courier crashing on a record it cannot decode.
var errCrash = errors.New("courier crashed on a malformed order")

// Run writes the run's orders, switches the partner's outage on, runs the
// naive courier and measures it.
func Run(ctx context.Context, cfg brewkit.Config, o Options) (Result, error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer cl.Close()
	if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.Orders); err != nil && o.Topic == courier.Orders {
		return Result{}, err
	}
	b := courier.Batch{Topic: o.Topic, Run: o.Run, Orders: o.Orders}
	if o.Poison >= 0 {
		b.Poison = []int{o.Poison}
	}
	if err := b.Write(ctx, cl); err != nil {
		return Result{}, err
	}
	r := &run{cfg: cfg, o: o, adm: adm, group: b.Group(), res: Result{Orders: o.Orders, Outage: o.Outage}}
	if err := o.Partner.Reset(ctx); err != nil {
		return r.res, err
	}
	parts, err := partitions(ctx, adm, o.Topic)
	if err != nil {
		return r.res, err
	}
	r.res.Partitions = len(parts)
	// The outage ends when the partner says it does: each call and booking
	// is counted in it or after it by that clock, not by when this loop
	// gets to look.
	f, err := o.Partner.SetFaults(ctx, partner.Faults{OutageFor: partner.Duration(o.Outage)})
	if err != nil {
		return r.res, err
	}
	r.start = time.Now()
	r.t = newTally(f.OutageUntil, parts)

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- r.serve(runCtx, ctx) }()
	ended, err := r.watch(ctx, done, f.OutageUntil)
	if err != nil {
		return r.res, err
	}
	// The group as it stands while the loop is still stuck, before the
	// courier leaves it.
	r.res.Revoked = int(r.revoked.Load())
	if groups, err := adm.DescribeGroups(ctx, r.group); err == nil {
		r.res.Members = len(groups[r.group].Members)
	}
	r.atEnd(ctx)
	stop()
	if !ended {
		<-done
	}
	r.leftBehind(b.PerPartition, parts)
	return r.res, nil
}

// run is one Run: the naive courier's group and what is measured of it.
type run struct {
	cfg     brewkit.Config
	o       Options
	adm     *kadm.Client
	group   string
	start   time.Time // when the outage began
	t       *tally
	stuck   atomic.Pointer[stuckOn] // the record the loop is retrying, if any
	revoked atomic.Int64            // partitions taken from the courier
	res     Result
}

// serve is the service: it runs the courier loop until ctx ends and, when
// the loop crashes on the poison record, notes the crash and restarts it,
// up to o.Restarts times. It returns the loop's last error. outer, Run's
// context, bounds the read of the group's offsets after a crash.
func (r *run) serve(ctx, outer context.Context) error {
	for {
		c, err := courierLoop(ctx, r.cfg, r.o, r.group, r.t, &r.stuck, &r.revoked)
		if errors.Is(err, errCrash) && len(r.res.Crashes) < r.o.Restarts {
			// The group's committed offset of the crashed partition: where
			// the restarted loop reads from.
			lag, lerr := r.adm.Lag(outer, r.group)
			if lerr == nil {
				if l, ok := lag[r.group].Lag.Lookup(r.o.Topic, c.Partition); ok {
					c.Committed = l.Commit.At
				}
			}
			r.res.Crashes = append(r.res.Crashes, c)
			continue // the service restarts
		}
		return err
	}
}

// lag is the group's lag on the topic, -1 when it cannot be read.
func (r *run) lag(ctx context.Context) int64 {
	lags, err := r.adm.Lag(ctx, r.group)
	if err != nil {
		return -1
	}
	return lags[r.group].Lag.Total()
}

// courierLoop is the naive courier: poll, book each record, retry a failed
// one in place until it books, commit the batch. With o.Restarts it crashes
// (returns errCrash) on a record it cannot decode, as a service that panics
// on a malformed order.
func courierLoop(ctx context.Context, cfg brewkit.Config, o Options, group string,
	t *tally, stuck *atomic.Pointer[stuckOn], revoked *atomic.Int64) (Crash, error) {
	cl, err := brewkit.NewClient(cfg, kgo.ConsumerGroup(group), kgo.ConsumeTopics(o.Topic),
		kgo.DisableAutoCommit(), kgo.KeepRetryableFetchErrors(),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
			for _, ps := range lost {
				revoked.Add(int64(len(ps)))
			}
		}))
	if err != nil {
		return Crash{}, err
	}
	defer cl.CloseAllowingRebalance()
	booker := courier.Booker{Partner: o.Partner}
	var fc brewkit.FetchCheck
	for {
		fs, err := fc.Poll(ctx, cl, 0)
		if ctx.Err() != nil {
			return Crash{}, nil
		}
		if err != nil {
			return Crash{}, err
		}
		t.polled.Store(true)
		for it := fs.RecordIter(); !it.Done(); {
			r := it.Next()
			for attempt := int64(1); ; attempt++ {
				at := time.Now()
				t.call(at)
				err := booker.Book(ctx, r)
				if err == nil {
					t.book(r.Partition)
					break
				}
				if ctx.Err() != nil {
					return Crash{}, nil
				}
				var poison *courier.PoisonError
				if errors.As(err, &poison) {
					t.uncall(at) // it never reached the partner
					if o.Restarts > 0 {
						return Crash{Partition: r.Partition, Offset: r.Offset}, errCrash
					}
				}
				why := err.Error()
				if poison != nil {
					why = poison.Err.Error()
				}
				stuck.Store(&stuckOn{partition: r.Partition, offset: r.Offset, err: why, attempts: attempt})
				select { // the naive retry: sleep, try again, forever
				case <-time.After(o.Backoff):
				case <-ctx.Done():
					return Crash{}, nil
				}
			}
			stuck.Store(nil)
		}
		if err := cl.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
			return Crash{}, fmt.Errorf("committing: %w", err)
		}
	}
}

func partitions(ctx context.Context, adm *kadm.Client, topic string) ([]int32, error) {
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return nil, err
	}
	t, ok := td[topic]
	if !ok || t.Err != nil {
		return nil, fmt.Errorf("topic %s: %v", topic, t.Err)
	}
	return t.Partitions.Numbers(), nil
}

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
	res := Result{Orders: o.Orders, Outage: o.Outage}
	if err := o.Partner.Reset(ctx); err != nil {
		return res, err
	}
	parts, err := partitions(ctx, adm, o.Topic)
	if err != nil {
		return res, err
	}
	res.Partitions = len(parts)
	// The outage ends when the partner says it does: each call and booking
	// is counted in it or after it by that clock, not by when this loop
	// gets to look.
	f, err := o.Partner.SetFaults(ctx, partner.Faults{OutageFor: partner.Duration(o.Outage)})
	if err != nil {
		return res, err
	}
	start := time.Now()
	t := newTally(f.OutageUntil, parts)
	var stuck atomic.Pointer[stuckOn]
	var revoked atomic.Int64

	loop := func(ctx context.Context) (Crash, error) {
		return courierLoop(ctx, cfg, o, b.Group(), t, &stuck, &revoked)
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() {
		for {
			c, err := loop(runCtx)
			if errors.Is(err, errCrash) && len(res.Crashes) < o.Restarts {
				lag, lerr := adm.Lag(ctx, b.Group())
				if lerr == nil {
					if l, ok := lag[b.Group()].Lag.Lookup(o.Topic, c.Partition); ok {
						c.Committed = l.Commit.At
					}
				}
				res.Crashes = append(res.Crashes, c)
				continue // the service restarts
			}
			done <- err
			return
		}
	}()

	lagNow := func() int64 {
		lags, err := adm.Lag(ctx, b.Group())
		if err != nil {
			return -1
		}
		return lags[b.Group()].Lag.Total()
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	left := max(0, time.Until(f.OutageUntil)) // of the outage: none when there is none
	// The lag while the partner is down is read a second before it comes
	// back: read right at the end, it races the courier, which books and
	// commits a batch within milliseconds of the partner's first 200.
	lateInOutage := time.After(max(0, left-time.Second))
	end := time.After(left + o.Watch)
	for {
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, errCrash) {
				return res, err
			}
			end = time.After(0)
			done = nil
			continue
		case <-tick.C:
			if o.Progress != nil {
				o.Progress(Second{At: time.Since(start).Round(time.Second), Calls: t.calls.Load(), Booked: t.booked.Load(), Lag: lagNow()})
			}
			continue
		case <-lateInOutage:
			res.LagInOutage = lagNow()
			continue
		case <-end:
		case <-ctx.Done():
			return res, ctx.Err()
		}
		break
	}
	// The group as it stands while the loop is still stuck, before the
	// courier leaves it.
	res.Revoked = int(revoked.Load())
	if groups, err := adm.DescribeGroups(ctx, b.Group()); err == nil {
		res.Members = len(groups[b.Group()].Members)
	}
	res.Booked, res.CallsTotal = t.booked.Load(), t.calls.Load()
	res.CallsInOutage, res.BookedInOutage = t.callsInOutage.Load(), t.bookedInOutage.Load()
	res.Lag = lagNow()
	if l, err := o.Partner.Log(ctx); err == nil {
		res.BookedTwice = len(l.Doubles())
	}
	stop()
	if done != nil {
		<-done
	}
	for _, p := range parts {
		if b.PerPartition[p] > 0 && t.bookedInOutageOn[p].Load() == 0 { // it had orders, and booked none
			res.StalledPartitions++
		}
	}
	if s := stuck.Load(); s != nil {
		res.StuckOn, res.StuckError, res.StuckAttempts = fmt.Sprintf("%d@%d", s.partition, s.offset), s.err, s.attempts
		res.stuckPartition, res.stuckOffset = s.partition, s.offset
	}
	return res, nil
}

// tally counts the courier's calls and bookings, and those of them made
// before the partner's outage ended (for the bookings: answered before it).
type tally struct {
	outageEnd                     time.Time
	calls, booked                 atomic.Int64
	callsInOutage, bookedInOutage atomic.Int64
	bookedInOutageOn              map[int32]*atomic.Int64 // by partition
}

func newTally(outageEnd time.Time, parts []int32) *tally {
	t := &tally{outageEnd: outageEnd, bookedInOutageOn: map[int32]*atomic.Int64{}}
	for _, p := range parts {
		t.bookedInOutageOn[p] = new(atomic.Int64)
	}
	return t
}

// call counts a call made at at; uncall takes it back (it never reached the
// partner).
func (t *tally) call(at time.Time) {
	t.calls.Add(1)
	if at.Before(t.outageEnd) {
		t.callsInOutage.Add(1)
	}
}

func (t *tally) uncall(at time.Time) {
	t.calls.Add(-1)
	if at.Before(t.outageEnd) {
		t.callsInOutage.Add(-1)
	}
}

// book counts a booking of partition p's record, answered now.
func (t *tally) book(p int32) {
	t.booked.Add(1)
	if time.Now().Before(t.outageEnd) {
		t.bookedInOutage.Add(1)
		t.bookedInOutageOn[p].Add(1)
	}
}

type stuckOn struct {
	partition int32
	offset    int64
	err       string
	attempts  int64
}

// courierLoop is the naive courier: poll, book each record, retry a failed
// one in place until it books, commit the batch. With o.Restarts it crashes
// (returns errCrash) on a record it cannot decode, as a service that panics
// on a malformed order.
func courierLoop(ctx context.Context, cfg brewkit.Config, o Options, group string,
	t *tally, stuck *atomic.Pointer[stuckOn], revoked *atomic.Int64) (Crash, error) {
	cl, err := brewkit.NewClient(cfg, kgo.ConsumerGroup(group), kgo.ConsumeTopics(o.Topic),
		kgo.DisableAutoCommit(), brewkit.ConsumeErrors(),
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

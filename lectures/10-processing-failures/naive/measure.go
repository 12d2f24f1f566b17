package naive

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// This file is the harness around the naive courier: the counts of its
// calls and bookings during the partner's outage and after, a line of
// progress every second, and what it stalled and was stuck on at the end.
// The Kafka calls are in naive.go.

// watch tells progress every second and reads the group's lag a second
// before the outage ends, until o.Watch after the outage or, at once, until
// the service ends (done). It returns whether done has been received.
func (r *run) watch(ctx context.Context, done <-chan error, outageUntil time.Time) (ended bool, err error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	left := max(0, time.Until(outageUntil)) // of the outage: none when there is none
	// The lag while the partner is down is read a second before it comes
	// back: read right at the end, it races the courier, which books and
	// commits a batch within milliseconds of the partner's first 200.
	lateInOutage := time.After(max(0, left-time.Second))
	end := time.After(left + r.o.Watch)
	// A courier that has not read yet measured nothing: the watch ends once
	// its first poll has returned, or with the error its loop ends with (a
	// fetch that no node answers ends it after KAFKA_TIMEOUT). On a busy
	// machine the group's join alone can outlast a short outage.
	due := false
	for {
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, errCrash) {
				return true, err
			}
			end = time.After(0)
			done = nil
			ended = true
		case <-tick.C:
			if r.o.Progress != nil {
				r.o.Progress(Second{At: time.Since(r.start).Round(time.Second), Calls: r.t.calls.Load(), Booked: r.t.booked.Load(), Lag: r.lag(ctx)})
			}
			if due && r.t.polled.Load() {
				return ended, nil
			}
		case <-lateInOutage:
			r.res.LagInOutage = r.lag(ctx)
		case <-end:
			if ended || r.t.polled.Load() {
				return ended, nil
			}
			due = true
		case <-ctx.Done():
			return ended, ctx.Err()
		}
	}
}

// atEnd notes the counts at the end of the watch, the group's lag and the
// orders the partner booked twice.
func (r *run) atEnd(ctx context.Context) {
	r.res.Booked, r.res.CallsTotal = r.t.booked.Load(), r.t.calls.Load()
	r.res.CallsInOutage, r.res.BookedInOutage = r.t.callsInOutage.Load(), r.t.bookedInOutage.Load()
	r.res.Lag = r.lag(ctx)
	if l, err := r.o.Partner.Log(ctx); err == nil {
		r.res.BookedTwice = len(l.Doubles())
	}
}

// leftBehind notes what the loop left behind: the partitions that had
// orders (perPartition) and booked none during the outage, and the record
// it was retrying at the end.
func (r *run) leftBehind(perPartition map[int32]int, parts []int32) {
	for _, p := range parts {
		if perPartition[p] > 0 && r.t.bookedInOutageOn[p].Load() == 0 { // it had orders, and booked none
			r.res.StalledPartitions++
		}
	}
	if s := r.stuck.Load(); s != nil {
		r.res.StuckOn, r.res.StuckError, r.res.StuckAttempts = fmt.Sprintf("%d@%d", s.partition, s.offset), s.err, s.attempts
		r.res.stuckPartition, r.res.stuckOffset = s.partition, s.offset
	}
}

// tally counts the courier's calls and bookings, and those of them made
// before the partner's outage ended (for the bookings: answered before it).
type tally struct {
	outageEnd                     time.Time
	polled                        atomic.Bool // the courier's first poll has returned records
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

// stuckOn is the record the loop is retrying, why it fails and how many
// tries it has had.
type stuckOn struct {
	partition int32
	offset    int64
	err       string
	attempts  int64
}

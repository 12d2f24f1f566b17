package backpressure

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// This file is the harness around a mode's run in demo.go: how many orders
// are written, a point of the timeline every second, the courier's peak and
// stop, and the orders the partner booked. The Kafka calls are in demo.go.

// acked is the writer's count of orders acknowledged, n so far.
func (r *modeRun) acked(n int) {
	r.mu.Lock()
	r.written = max(r.written, n)
	r.mu.Unlock()
}

// writtenNow is how many orders are acknowledged, and why the writer
// stopped early (nil while it writes or when it wrote all).
func (r *modeRun) writtenNow() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.written, r.writeErr
}

// sample notes what the watch saw at: n orders written, the group's lag, the
// courier's last sample s. One point a second (a late tick fills the
// seconds it missed), up to o.Watch.
func (r *modeRun) sample(at time.Duration, n int, lag int64, s Report) {
	r.res.MaxLag = max(r.res.MaxLag, lag)
	for sec := int(at / time.Second); len(r.res.Timeline) < sec && len(r.res.Timeline) < int(r.o.Watch/time.Second); {
		pt := Point{Second: len(r.res.Timeline) + 1, Written: n, Lag: lag, Queue: s.Queue, RSS: s.RSS, Paused: s.Paused}
		r.res.Timeline = append(r.res.Timeline, pt)
		if r.o.Progress != nil {
			r.o.Progress(fmt.Sprintf("%-9s %3ds  written %6d  lag %6d  queue %6d  rss %4d MiB  booked %6d", r.res.Mode, pt.Second, n, lag, s.Queue, s.RSS>>20, s.Booked))
		}
	}
}

// stopped takes from the stopped courier process its peaks, how many times
// it paused and how many partitions rebalances took from it.
func (r *modeRun) stopped() error {
	st := r.p.Stopped()
	if st == nil {
		return fmt.Errorf("the courier process did not report its stop")
	}
	peak := r.p.Peak()
	r.res.MaxQueue, r.res.PeakRSS, r.res.Pauses, r.res.Revoked = peak.Queue, peak.PeakRSS, st.Pauses, st.Revoked
	return nil
}

// tally counts from the partner's log the mode's orders booked, and those
// booked more than once.
func (r *modeRun) tally(ctx context.Context) error {
	log, err := r.o.Partner.Log(ctx)
	if err != nil {
		return err
	}
	times := map[string]int{}
	for _, b := range log.Bookings {
		if strings.HasPrefix(b.OrderID, r.run+"-") {
			times[b.OrderID]++
		}
	}
	r.res.Booked = len(times)
	for _, n := range times {
		if n > 1 {
			r.res.BookedTwice++
		}
	}
	return nil
}

package shutdown

import (
	"context"
	"fmt"
	"time"

	"github.com/brew-course/kafka/lectures/10-processing-failures/backpressure"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// This file is the harness around a signal's run: the progress it tells,
// and the counts from the partner's booking log and the records the next
// instance read. The Kafka calls are in shutdown.go.

// say tells progress, when o.Progress is set.
func (r *signalRun) say(format string, args ...any) {
	if r.o.Progress != nil {
		r.o.Progress(r.row.Signal + ": " + fmt.Sprintf(format, args...))
	}
}

// booked is the orders the first instance booked, by the partner's log.
func (r *signalRun) booked(ctx context.Context) (map[string]bool, error) {
	// A killed courier's last calls may still be in the partner, which
	// books what reached it: the log is read once every call is answered.
	var log partner.Log
	var err error
	err = brewkit.WaitFor(ctx, 10*time.Second, 10*time.Millisecond, func() bool {
		log, err = r.o.Partner.Log(ctx)
		c := log.Calls
		return err == nil && c.Total == c.Booked+c.Replayed+c.Malformed+c.Refused+c.TimedOut
	})
	if err != nil {
		return nil, fmt.Errorf("the partner's log: %w", err)
	}
	done := map[string]bool{}
	for _, bk := range log.Bookings {
		done[bk.OrderID] = true
	}
	r.row.Booked = len(done)
	return done, nil
}

// tally counts the records the next instance p read whose order the first
// had booked, and, by the partner's log, the orders booked twice, the
// calls answered with a booking the key already had, and the orders of
// ids never booked.
func (r *signalRun) tally(ctx context.Context, p *backpressure.Proc, booked map[string]bool, ids []string) error {
	for _, rd := range p.Reads() {
		if booked[rd.Order] {
			r.row.Reread++
		}
	}
	log, err := r.o.Partner.Log(ctx)
	if err != nil {
		return err
	}
	r.row.BookedTwice, r.row.Replays = len(log.Doubles()), log.Calls.Replayed
	times := log.Times()
	for _, id := range ids {
		if times[id] == 0 {
			r.row.Lost++
		}
	}
	return nil
}

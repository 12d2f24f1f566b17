// The reference solution of exercise 14/dedup.
package dedup

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
)

// Dedup remembers each order id with its event time, and sweeps out the
// ones window behind the stream time each time the stream time has moved
// window/4 since the last sweep: an id is kept at least window and at most
// 1.25 x window of stream time.
type Dedup struct {
	window time.Duration
	seen   map[string]time.Time // order id: its event time
	stream time.Time            // the newest event time seen
	swept  time.Time            // the stream time of the last sweep
}

// New returns an operator for one partition that remembers each order id
// for window of stream time.
func New(window time.Duration) *Dedup {
	return &Dedup{window: window, seen: map[string]time.Time{}}
}

// Forward decodes the order, moves the stream time (event time, from the
// payload: never the record's timestamp, which says when it was written),
// sweeps when due, and forwards an order id it does not remember.
func (d *Dedup) Forward(r *kgo.Record) (bool, error) {
	e, err := till.Decode(r)
	if err != nil {
		return false, err
	}
	if e.At.After(d.stream) {
		d.stream = e.At
	}
	if d.stream.Sub(d.swept) >= d.window/4 {
		for id, at := range d.seen {
			if d.stream.Sub(at) >= d.window {
				delete(d.seen, id)
			}
		}
		d.swept = d.stream
	}
	if _, ok := d.seen[e.OrderID]; ok {
		return false, nil // a retry: keep remembering it, a third copy may come
	}
	if d.stream.Sub(e.At) < d.window {
		d.seen[e.OrderID] = e.At
	}
	return true, nil
}

// Len is how many order ids the operator remembers now.
func (d *Dedup) Len() int { return len(d.seen) }

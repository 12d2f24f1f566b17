// A plausible wrong solution of exercise 14/dedup: it remembers each order
// id from the stream time at which the order arrived, not from its event
// time, and forgets it window later. For an order that arrives on time the
// two are the same; an order a till kept while it was offline arrives more
// than window behind the stream time, and this one keeps it past 2 x window
// of its event time. The grader must fail it.
package dedup

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
)

type Dedup struct {
	window time.Duration
	seen   map[string]time.Time // order id: the stream time when it arrived
	stream time.Time
}

func New(window time.Duration) *Dedup {
	return &Dedup{window: window, seen: map[string]time.Time{}}
}

func (d *Dedup) Forward(r *kgo.Record) (bool, error) {
	e, err := till.Decode(r)
	if err != nil {
		return false, err
	}
	if e.At.After(d.stream) {
		d.stream = e.At
	}
	for id, arrived := range d.seen {
		if d.stream.Sub(arrived) >= d.window {
			delete(d.seen, id)
		}
	}
	if _, ok := d.seen[e.OrderID]; ok {
		return false, nil
	}
	d.seen[e.OrderID] = d.stream
	return true, nil
}

func (d *Dedup) Len() int { return len(d.seen) }

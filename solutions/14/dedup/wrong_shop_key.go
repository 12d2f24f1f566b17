// A plausible wrong solution of exercise 14/dedup: it takes the record's
// key for the order's identity, but the till keys orders by shop: every
// other order of a shop within the window is dropped as a "retry". The
// grader must fail it.
package dedup

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
)

type Dedup struct {
	window time.Duration
	seen   map[string]time.Time
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
	for k, at := range d.seen {
		if d.stream.Sub(at) >= d.window {
			delete(d.seen, k)
		}
	}
	key := string(r.Key)
	if _, ok := d.seen[key]; ok {
		return false, nil
	}
	d.seen[key] = e.At
	return true, nil
}

func (d *Dedup) Len() int { return len(d.seen) }

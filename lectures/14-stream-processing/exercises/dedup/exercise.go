// Package dedup is exercise 14/dedup: forward each order once, though the till retries.
//
// Graded on: any stand.
//
// The till retries: when a write times out it writes the order again, the
// same order id and the same payload, to the same partition at a later
// offset; most retries come seconds after the original, a few minutes after
// it (the till was offline), and some orders are written three times. A till
// that was offline for a while also writes the orders it kept when it is
// back, the oldest far more than window behind the stream time. Write
// Dedup, an operator that reads one partition's records in offset order
// (orders as package till writes them: keyed by the shop, the order id and
// the event time "at" in the payload; till.Decode reads them) and forwards
// each order id once. Its memory must stay bounded however long the stream
// is: it may forget an order id once the partition's stream time (the
// newest event time Forward has seen so far) is window or more past that
// order's event time, and must have forgotten it by the time the stream
// time is 2 x window past it; until the stream time is window past it, it
// must remember it (every retry arrives while the stream time is less than
// window past its order's event time). Len is how many order ids it
// remembers now. The grader writes three hours of orders with retries (a
// lunch rush, a quiet afternoon, another rush, and on each partition a till
// offline for 25 minutes across the first two) to a fresh topic of three
// partitions, reads it back, feeds each partition to its own
// New(10*time.Minute) and checks, against its own recount of the topic,
// that every distinct order id is forwarded exactly once, and, after every
// record, that Len is at most the number of distinct order ids seen on the
// partition whose event time is less than 2 x window behind its stream
// time.
package dedup

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Dedup remembers the order ids one partition has forwarded lately.
type Dedup struct {
	window time.Duration
	// TODO: what it remembers, and the partition's stream time.
}

// New returns an operator for one partition that remembers each order id
// for window of stream time.
func New(window time.Duration) *Dedup {
	return &Dedup{window: window}
}

// Forward reads the partition's next record, an order written by the till,
// and reports whether to forward it: false for a retry of an order already
// forwarded. It fails on a record that is not an order.
func (d *Dedup) Forward(r *kgo.Record) (bool, error) {
	// TODO: decode the order, move the stream time, forget what is old
	// enough, and forward only an order id not remembered.
	return true, nil
}

// Len is how many order ids the operator remembers now.
func (d *Dedup) Len() int {
	return 0
}

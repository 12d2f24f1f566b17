// Package window holds what a windowed aggregation decides for each record,
// with no Kafka in it: which tumbling window an order's event time falls
// in, whether the window is still open (stream time and grace), and the
// revenue a window adds up. The processor, the batch recount and the tests
// all decide through it, so they cannot disagree on the rules.
package window

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Tumbling windows: fixed, back to back, not overlapping. An order at
// 12:04:31 falls in [12:04:00, 12:05:00) when Size is a minute.
type Tumbling struct {
	Size  time.Duration
	Grace time.Duration // how long after its end a window still takes late orders
}

// Brew is the analytics service's window: revenue per shop per minute, late
// orders taken for 30 s after a minute ends.
var Brew = Tumbling{Size: time.Minute, Grace: 30 * time.Second}

// Start is the start of the window that t falls in.
func (w Tumbling) Start(t time.Time) time.Time { return t.UTC().Truncate(w.Size) }

// Verdict is what happens to one record.
type Verdict int

const (
	InOrder    Verdict = iota // its event time is the newest the partition has seen
	OutOfOrder                // older than the stream time, but its window is still open: counted
	TooLate                   // its window closed (end + grace <= stream time): dropped
)

func (v Verdict) String() string {
	return [...]string{"in order", "out of order", "too late"}[v]
}

// Judge decides a record with event time at on a partition whose stream
// time (the newest event time seen on it before this record) is stream.
// It returns the verdict and the partition's stream time after the record.
// Stream time only moves forward; a dropped record does not move it.
func (w Tumbling) Judge(stream, at time.Time) (Verdict, time.Time) {
	switch {
	case !at.Before(stream):
		return InOrder, at
	case !w.Start(at).Add(w.Size + w.Grace).After(stream):
		return TooLate, stream
	default:
		return OutOfOrder, stream
	}
}

// Key names one window of one shop.
type Key struct {
	Shop  string
	Start time.Time
}

func (k Key) String() string { return k.Shop + "@" + k.Start.UTC().Format("15:04") }

// Bytes is the key as the store and the changelog hold it: the shop and the
// window's start in Unix milliseconds, so keys sort by shop, then time.
func (k Key) Bytes() []byte {
	return fmt.Appendf(nil, "%s|%013d", k.Shop, k.Start.UnixMilli())
}

// ParseKey reads a key written by Bytes.
func ParseKey(b []byte) (Key, error) {
	shop, ms, ok := strings.Cut(string(b), "|")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || shop == "" {
		return Key{}, fmt.Errorf("not a window key: %q", b)
	}
	return Key{Shop: shop, Start: time.UnixMilli(n).UTC()}, nil
}

// Revenue is what one window adds up.
type Revenue struct {
	Orders int   `json:"orders"`
	Cents  int64 `json:"cents"`
}

// Add counts one order of cents.
func (r Revenue) Add(cents int64) Revenue { return Revenue{r.Orders + 1, r.Cents + cents} }

// Totals is every window's revenue.
type Totals map[Key]Revenue

// Counts says what happened to the records of a run.
type Counts struct {
	Records    int `json:"records"`
	OutOfOrder int `json:"out_of_order"` // counted, though older than the stream time
	TooLate    int `json:"too_late"`     // dropped
}

// Count adds one verdict.
func (c *Counts) Count(v Verdict) {
	c.Records++
	switch v {
	case OutOfOrder:
		c.OutOfOrder++
	case TooLate:
		c.TooLate++
	}
}

// Diff compares got with want: the windows whose revenue differs or that
// one of them lacks, and the cents got has over want in all (negative:
// under).
func Diff(want, got Totals) (differ []Key, extraCents int64) {
	for k, w := range want {
		if got[k] != w {
			differ = append(differ, k)
		}
		extraCents -= w.Cents
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			differ = append(differ, k)
		}
		extraCents += g.Cents
	}
	return differ, extraCents
}

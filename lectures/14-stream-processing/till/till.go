// Package till writes the orders the analytics service counts: each order's
// event time in its payload ("at"), keyed by its shop, and a few of them
// late on purpose. Its event times are fixed (lunch on a Saturday in March,
// from a seeded random source), so every run of the lecture counts the same
// windows; the records' own timestamps are when they were written.
package till

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/window"
)

// Lunch is when the orders' event times start.
var Lunch = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

// Plan says what to write.
type Plan struct {
	Shops      int     // shop-01 .. shop-NN; shop n goes to partition (n-1) mod partitions
	Orders     int     // in all
	Minutes    int     // the event times span this many minutes from Lunch
	OutOfOrder float64 // the share of orders written up to 25 s behind their partition's newest: counted
	TooLate    float64 // the share written 90-150 s behind it: their window has closed, dropped
	Seed       uint64
}

// Defaults: 12 shops, 1,200 orders over 10 minutes, 5% out of order, 2% too late.
var Defaults = Plan{Shops: 12, Orders: 1200, Minutes: 10, OutOfOrder: 0.05, TooLate: 0.02, Seed: 14}

// Order is one order as the till writes it.
type Order struct {
	brewkit.Event
	Partition int32
	Meant     window.Verdict // how the till meant it: in order, out of order, too late
}

// Draw draws the plan's orders, partition by partition in the order the
// till writes them. A partition's event times step forward evenly over the
// minutes; an out-of-order or late order is drawn behind the newest event
// time written to its partition so far, the gap the window's grace decides.
func (p Plan) Draw(partitions int32) []Order {
	rng := rand.New(rand.NewPCG(p.Seed, 14))
	span := time.Duration(p.Minutes) * time.Minute
	step := span / time.Duration(max(p.Orders, 1))
	newest := map[int32]time.Time{}
	var out []Order
	for i := range p.Orders {
		shop := 1 + rng.IntN(p.Shops)
		part := int32(shop-1) % partitions
		at := Lunch.Add(time.Duration(i) * step).Truncate(time.Millisecond)
		meant := window.InOrder
		switch r := rng.Float64(); {
		case r < p.TooLate && !newest[part].IsZero():
			at = newest[part].Add(-90*time.Second - time.Duration(rng.IntN(60_000))*time.Millisecond)
			meant = window.TooLate
		case r < p.TooLate+p.OutOfOrder && !newest[part].IsZero():
			at = newest[part].Add(-5*time.Second - time.Duration(rng.IntN(20_000))*time.Millisecond)
			meant = window.OutOfOrder
		}
		if at.After(newest[part]) {
			newest[part] = at
		} else if meant == window.InOrder {
			meant = window.OutOfOrder // an even step that fell behind a late neighbour's
		}
		e := brewkit.NewOrder(rng, int64(i+1), at)
		e.ShopID = brewkit.ShopID(shop)
		out = append(out, Order{Event: e, Partition: part, Meant: meant})
	}
	return out
}

// Record is the order as written: keyed by its shop, to its partition.
func (o Order) Record(topic string) *kgo.Record {
	r := o.Event.Record(topic)
	r.Key = []byte(o.ShopID)
	r.Partition = o.Partition
	return r
}

// Decode reads an order written by Record.
func Decode(r *kgo.Record) (brewkit.Event, error) {
	var e brewkit.Event
	if err := json.Unmarshal(r.Value, &e); err != nil {
		return e, fmt.Errorf("%s/%d@%d: not an order: %w", r.Topic, r.Partition, r.Offset, err)
	}
	if e.ShopID == "" || e.At.IsZero() {
		return e, fmt.Errorf("%s/%d@%d: an order with no shop or no time", r.Topic, r.Partition, r.Offset)
	}
	return e, nil
}

// Written is what the till wrote.
type Written struct {
	Orders int
	Meant  window.Counts // as the till meant them
	Cents  int64
}

// Write writes the plan's orders to topic, which has partitions
// partitions, and reports what it meant.
func Write(ctx context.Context, cfg brewkit.Config, topic string, partitions int32, p Plan) (Written, error) {
	cl, err := brewkit.NewClient(cfg, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return Written{}, err
	}
	defer cl.Close()
	var w Written
	orders := p.Draw(partitions)
	recs := make([]*kgo.Record, len(orders))
	for i, o := range orders {
		recs[i] = o.Record(topic)
		w.Orders++
		w.Meant.Count(o.Meant)
		w.Cents += o.Cents
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return w, fmt.Errorf("writing orders to %s: %w", topic, err)
	}
	return w, nil
}

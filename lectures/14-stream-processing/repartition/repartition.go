// Package repartition joins Brew's payments with their orders, per shop, as
// a stream processor does it, and shows why it must repartition first.
//
// The till writes orders keyed by SHOP, shop n to partition (n-1) mod 6.
// The payment service writes payments keyed by PAYMENT id (pay-0000123),
// to a topic of 4 partitions, with the default (murmur2) partitioner. A
// processor that joins partition p of one with partition p of the other
// (that is all a consumer of two topics can do without shipping every
// record to every instance) finds a payment's order only by chance: the
// two streams are not co-partitioned. Co-partitioned means three things
// alike: the key, the partition count, and the function that maps a key to
// a partition.
//
// So the processor works in two stages, as Kafka Streams does after a
// selectKey before a join:
//
//  1. Repartition: read the payments, re-key each by its shop and write it
//     to an internal topic with the orders' partition count, partitioned the
//     way the till partitions orders. Kafka Streams names such a topic
//     <application.id>-<name>-repartition and creates it itself.
//  2. Join: read partition p of the orders and partition p of the
//     repartition topic together, as one task, and join each payment with
//     its order when the payment's event time is within Window after the
//     order's. The task keeps the orders it has seen in memory (a window
//     store) for Retention of stream time; the lecture's state program shows
//     how a store survives a restart (a changelog), which this one does not
//     need.
//
// Recount does the same join as a batch over the two input topics, the
// oracle the streaming join must agree with.
package repartition

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// The join's rules, in event time.
const (
	// Window: a payment joins its order when it comes at most this long
	// after it (and not before it).
	Window = 5 * time.Minute
	// Retention: the task keeps an order this long after its event time,
	// in stream time. It is longer than Window so that a payment that
	// comes too late still finds its order and is told from one that names
	// no order at all (Kafka Streams' window stores, too, keep records for
	// a retention of at least the window and its grace).
	Retention = 15 * time.Minute
	// Wait: a payment whose order the task has not read yet waits for it
	// this long after the payment's event time, in stream time; then it
	// names an unknown order. The till writes an order at most 150 s behind
	// its partition's newest, so an order never comes later than that.
	Wait = 5 * time.Minute
)

// Partition counts of the lecture's topics: the payments' differs from the
// orders' on purpose.
const (
	OrdersPartitions   int32 = 6
	PaymentsPartitions int32 = 4
)

// Verdict is what the join decides.
type Verdict int

const (
	Matched      Verdict = iota // a payment within Window after its order: joined
	TooLate                     // a payment outside the window of its order: not joined
	UnknownOrder                // a payment naming an order that does not exist
	Unpaid                      // an order no payment named
)

func (v Verdict) String() string {
	return [...]string{"matched", "too late", "unknown order", "unpaid"}[v]
}

// Judge decides a payment made at paid for an order placed at ordered.
func Judge(ordered, paid time.Time) Verdict {
	if d := paid.Sub(ordered); d >= 0 && d <= Window {
		return Matched
	}
	return TooLate
}

// Counts say what a join decided. Matched, TooLate and UnknownOrder count
// payments; Unpaid counts orders.
type Counts struct {
	Matched      int `json:"matched"`
	TooLate      int `json:"too_late"`
	UnknownOrder int `json:"unknown_order"`
	Unpaid       int `json:"unpaid"`
}

// Count adds one verdict.
func (c *Counts) Count(v Verdict) {
	switch v {
	case Matched:
		c.Matched++
	case TooLate:
		c.TooLate++
	case UnknownOrder:
		c.UnknownOrder++
	case Unpaid:
		c.Unpaid++
	}
}

func (c Counts) String() string {
	return fmt.Sprintf("matched %d, too late %d, unknown order %d, unpaid %d", c.Matched, c.TooLate, c.UnknownOrder, c.Unpaid)
}

// Joined is one order joined with its payment: the join's output record,
// keyed by the shop.
type Joined struct {
	OrderID   string    `json:"order_id"`
	ShopID    string    `json:"shop_id"`
	Items     []string  `json:"items"`
	Cents     int64     `json:"total_cents"`
	OrderedAt time.Time `json:"ordered_at"`
	PaymentID string    `json:"payment_id"`
	PaidAfter float64   `json:"paid_after_s"` // seconds from the order to its payment, event time
}

// joined joins order o with payment p, whose id is id.
func joined(o, p brewkit.Event, id string) Joined {
	return Joined{
		OrderID: o.OrderID, ShopID: o.ShopID, Items: o.Items, Cents: o.Cents, OrderedAt: o.At,
		PaymentID: id, PaidAfter: float64(p.At.Sub(o.At).Milliseconds()) / 1000,
	}
}

// Same reports whether j and k are the same join.
func (j Joined) Same(k Joined) bool {
	return j.OrderID == k.OrderID && j.ShopID == k.ShopID && j.Cents == k.Cents && j.OrderedAt.Equal(k.OrderedAt) &&
		j.PaymentID == k.PaymentID && j.PaidAfter == k.PaidAfter && strings.Join(j.Items, ",") == strings.Join(k.Items, ",")
}

// ShopPartition is the partition the till writes shop's orders to: shop n
// (shop-07 is 7) goes to (n-1) mod partitions. The repartition stage writes
// payments by the same rule; see Repartition.
func ShopPartition(shop string, partitions int32) (int32, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(shop, "shop-"))
	if err != nil || n < 1 || !strings.HasPrefix(shop, "shop-") {
		return 0, fmt.Errorf("%q is not a shop (shop-NN)", shop)
	}
	return int32(n-1) % partitions, nil
}

package repartition

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Batch is what the batch recount decided.
type Batch struct {
	Counts
	Joined []Joined // by order id
}

// Recount is the oracle: it reads the orders and the payments, as the till
// and the payment service wrote them, to their end and joins them in
// memory, with every order at hand and no stream time: a payment joins
// the order it names when Judge says so. The streaming join must decide
// exactly the same.
func Recount(ctx context.Context, cfg brewkit.Config, orders, payments string) (Batch, error) {
	placed := map[string]*stored{}
	var order []string
	if err := readAll(ctx, cfg, orders, decodeOrder, func(e event) {
		if placed[e.OrderID] == nil {
			placed[e.OrderID] = &stored{Event: e.Event}
			order = append(order, e.OrderID)
		}
	}); err != nil {
		return Batch{}, err
	}
	var b Batch
	if err := readAll(ctx, cfg, payments, decodePayment, func(p event) {
		o := placed[p.OrderID]
		if o == nil {
			b.Count(UnknownOrder)
			return
		}
		o.paid = true
		v := Judge(o.At, p.At)
		b.Count(v)
		if v == Matched {
			b.Joined = append(b.Joined, joined(o.Event, p.Event, p.payment))
		}
	}); err != nil {
		return Batch{}, err
	}
	for _, id := range order {
		if !placed[id].paid {
			b.Count(Unpaid)
		}
	}
	slices.SortFunc(b.Joined, byOrder)
	return b, nil
}

// ReadJoined reads the join's output topic to its end, by order id.
func ReadJoined(ctx context.Context, cfg brewkit.Config, topic string) ([]Joined, error) {
	var js []Joined
	err := read(ctx, cfg, topic, func(r *kgo.Record) error {
		j, err := decodeJoined(r)
		js = append(js, j)
		return err
	})
	slices.SortFunc(js, byOrder)
	return js, err
}

// readAll reads topic to its end, decoding each record.
func readAll(ctx context.Context, cfg brewkit.Config, topic string, decode func(*kgo.Record) (event, error), fn func(event)) error {
	return read(ctx, cfg, topic, func(r *kgo.Record) error {
		e, err := decode(r)
		if err == nil {
			fn(e)
		}
		return err
	})
}

// read reads topic to the end offsets it has now, stopping at the first
// record fn fails on.
func read(ctx context.Context, cfg brewkit.Config, topic string, fn func(*kgo.Record) error) error {
	cl, err := brewkit.NewClient(cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	ends, err := brewkit.EndOffsets(ctx, kadm.NewClient(cl), topic)
	if err != nil {
		return err
	}
	var first error
	err = brewkit.ReadTo(ctx, cfg, topic, nil, ends, ReadLimit, func(r *kgo.Record) {
		if first == nil {
			first = fn(r)
		}
	})
	if err == nil {
		err = first
	}
	return err
}

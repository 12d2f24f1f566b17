package repartition

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
)

// Options configure a run of the repartition program.
type Options struct {
	Orders   int    // the till's orders
	Seed     uint64 // seeds the till's orders and the payments
	Prefix   string // the fresh topics' names start with it
	Keep     bool   // leave the topics behind
	Progress func(string)
}

// AppID is the processor's application id: Kafka Streams names its
// internal topics after it.
const AppID = "brew.stream.join"

// Defaults are the program's defaults.
var Defaults = Options{Orders: till.Defaults.Orders, Seed: till.Defaults.Seed, Prefix: AppID + "-"}

// Topics are a run's topics.
type Topics struct {
	Orders      string // the till's orders, keyed by shop
	Payments    string // the payments, keyed by payment id
	Repartition string // the payments re-keyed by shop
	Joined      string // the join's output
}

// Result is what a run did.
type Result struct {
	Topics                                  Topics
	OrdersPartitions, PaymentsPartitions    int32
	RepartitionPartitions, JoinedPartitions int32
	Orders, Payments                        int    // written
	Rekeyed                                 int    // payments the repartition stage wrote
	Meant                                   Counts // what the payments were drawn to be
	Join                                    Streamed
	Joined                                  []Joined // the join's output as read back, by order id
	Recount                                 Counts   // the batch oracle's
	Differ                                  []string // how the streaming join differs from the recount; none when equal
}

// Equal reports whether the streaming join decided what the batch recount
// did, and what the payments were drawn to be.
func (r Result) Equal() bool { return len(r.Differ) == 0 }

// ErrDiffers is Run's error when the streaming join and the recount differ.
var ErrDiffers = errors.New("the streaming join differs from the batch recount")

// Run writes the till's orders and their payments to fresh topics,
// repartitions the payments by shop, joins them with the orders, reads the
// output back and compares it with the batch recount. It deletes the
// topics at the end unless o.Keep.
func Run(ctx context.Context, cfg brewkit.Config, o Options) (r Result, err error) {
	say := o.Progress
	if say == nil {
		say = func(string) {}
	}
	_, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return r, err
	}
	defer adm.Close()
	r.OrdersPartitions, r.PaymentsPartitions = OrdersPartitions, PaymentsPartitions
	r.RepartitionPartitions, r.JoinedPartitions = OrdersPartitions, OrdersPartitions
	made, err := r.freshTopics(ctx, adm, o.Prefix)
	if !o.Keep {
		defer func() {
			if derr := made.drop(ctx); err == nil {
				err = derr
			}
		}()
	}
	if err != nil {
		return r, err
	}
	if o.Keep {
		say(fmt.Sprintf("topics kept: %s %s %s %s", r.Topics.Orders, r.Topics.Payments, r.Topics.Repartition, r.Topics.Joined))
	}

	start := time.Now()
	if err := r.write(ctx, cfg, o.Orders, o.Seed); err != nil {
		return r, err
	}
	say(fmt.Sprintf("wrote %d orders keyed by shop to %s and %d payments keyed by payment id to %s (%s)",
		r.Orders, r.Topics.Orders, r.Payments, r.Topics.Payments, since(start)))

	start = time.Now()
	if r.Rekeyed, err = Repartition(ctx, cfg, r.Topics.Payments, r.Topics.Repartition); err != nil {
		return r, err
	}
	say(fmt.Sprintf("re-keyed %d payments by shop into %s (%s)", r.Rekeyed, r.Topics.Repartition, since(start)))

	start = time.Now()
	if r.Join, err = Join(ctx, cfg, JoinSpec{Orders: r.Topics.Orders, Payments: r.Topics.Repartition, Output: r.Topics.Joined}); err != nil {
		return r, err
	}
	if r.Joined, err = ReadJoined(ctx, cfg, r.Topics.Joined); err != nil {
		return r, err
	}
	say(fmt.Sprintf("joined %d orders with their payments into %s (%s)", len(r.Joined), r.Topics.Joined, since(start)))

	start = time.Now()
	b, err := Recount(ctx, cfg, r.Topics.Orders, r.Topics.Payments)
	if err != nil {
		return r, err
	}
	r.Recount = b.Counts
	say(fmt.Sprintf("recounted the join as a batch from %s and %s (%s)", r.Topics.Orders, r.Topics.Payments, since(start)))
	r.Differ = r.differ(b)
	return r, nil
}

// drops delete the topics a run made.
type drops []func(context.Context) error

// drop deletes the topics, the last made first, and returns the first
// error.
func (ds drops) drop(ctx context.Context) error {
	var first error
	for _, d := range slices.Backward(ds) {
		if err := d(ctx); first == nil {
			first = err
		}
	}
	return first
}

// freshTopics makes the run's four topics, each a fresh name under prefix
// with r's partition counts, and names them in r.Topics. The drops it
// returns delete those it made, even when it failed part way.
func (r *Result) freshTopics(ctx context.Context, adm *kadm.Client, prefix string) (drops, error) {
	var made drops
	for _, t := range []struct {
		name       *string
		what       string
		partitions int32
	}{
		{&r.Topics.Orders, "orders.", r.OrdersPartitions},
		{&r.Topics.Payments, "payments.", r.PaymentsPartitions},
		{&r.Topics.Repartition, "payments-by-shop-repartition.", r.RepartitionPartitions},
		{&r.Topics.Joined, "paid-orders.", r.JoinedPartitions},
	} {
		name, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: prefix + t.what, Partitions: t.partitions})
		if err != nil {
			return made, err
		}
		*t.name = name
		made = append(made, drop)
	}
	return made, nil
}

// write writes the join's input: the till's orders keyed by shop, and
// their payments keyed by payment id, both drawn from seed.
func (r *Result) write(ctx context.Context, cfg brewkit.Config, orders int, seed uint64) error {
	plan := till.Defaults
	plan.Orders, plan.Seed = orders, seed
	w, err := till.Write(ctx, cfg, r.Topics.Orders, r.OrdersPartitions, plan)
	if err != nil {
		return err
	}
	r.Orders = w.Orders
	pays := Payments
	pays.Seed = seed
	drawn := pays.Draw(plan.Draw(r.OrdersPartitions))
	if err := WritePayments(ctx, cfg, r.Topics.Payments, drawn); err != nil {
		return err
	}
	r.Payments, r.Meant = len(drawn.Payments), drawn.Meant
	return nil
}

func since(t time.Time) string { return time.Since(t).Round(10 * time.Millisecond).String() }

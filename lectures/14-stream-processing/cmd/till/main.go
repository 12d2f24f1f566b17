// Command till writes the lunch orders the analytics service counts to the
// lecture's topic (brew.stream.orders, 6 partitions, created if missing):
// for a live demo with `make analytics` and `make recount`.
package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/analytics"
	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
)

func main() {
	p := till.Defaults
	topic := flag.String("topic", analytics.Defaults.In, "the orders' topic (created with 6 partitions if missing)")
	flag.IntVar(&p.Orders, "orders", p.Orders, "orders to write")
	flag.Uint64Var(&p.Seed, "seed", p.Seed, "seed of the orders (the same seed writes the same orders again)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: till [-topic %s] [-orders 1200] [-seed 14]\n\n", analytics.Defaults.In)
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("topic", *topic)
	fc.Require(p.Orders >= 1, "orders", p.Orders, "must be at least 1")
	fc.NoArgs()
	fc.ExitOnUsageError("till")
	brewkit.Main("till", func(ctx context.Context, cfg brewkit.Config) error {
		cl, adm, err := brewkit.Connect(ctx, cfg)
		if err != nil {
			return err
		}
		defer cl.Close()
		if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.TopicNamed(*topic, 6)); err != nil {
			return err
		}
		td, err := adm.ListTopics(ctx, *topic)
		if err == nil {
			err = td.Error()
		}
		if err != nil {
			return fmt.Errorf("the partitions of %s: %w", *topic, err)
		}
		n := int32(len(td[*topic].Partitions))
		w, err := till.Write(ctx, cfg, *topic, n, p)
		if err != nil {
			return err
		}
		fmt.Printf("wrote %d orders to %s (%d partitions): %d out of order, %d too late on purpose; $%.2f in all\n",
			w.Orders, *topic, n, w.Meant.OutOfOrder, w.Meant.TooLate, float64(w.Cents)/100)
		return nil
	})
}

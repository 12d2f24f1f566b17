// Command repartition (`make repartition`) joins Brew's payments with their
// orders per shop. The orders are keyed by shop on 6 partitions, the
// payments by payment id on 4: not co-partitioned, so the processor first
// re-keys the payments by shop into a repartition topic laid out like the
// orders, then joins partition p of both within a 5-minute window in event
// time. At the end it compares the join with a batch recount of the inputs.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/repartition"
)

func main() {
	o := repartition.Defaults
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: repartition [flags]

Writes -orders orders keyed by shop (%d partitions) and their payments
keyed by payment id (%d partitions) to fresh topics %s*,
re-keys the payments by shop into a repartition topic, joins each payment
with its order within %d minutes of event time, and checks the join against
a batch recount. The topics are deleted at the end unless -keep.

`, repartition.OrdersPartitions, repartition.PaymentsPartitions, o.Prefix, int(repartition.Window.Minutes()))
		flag.PrintDefaults()
	}
	flag.IntVar(&o.Orders, "orders", o.Orders, "how many orders the till writes")
	flag.Uint64Var(&o.Seed, "seed", o.Seed, "seeds the orders and the payments: one seed, one outcome")
	flag.BoolVar(&o.Keep, "keep", false, "keep the topics (make reset-lecture deletes them)")
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(o.Orders >= 1 && o.Orders <= 100_000, "orders", o.Orders, "must be 1 to 100000")
	fc.NoArgs()
	fc.ExitOnUsageError("repartition")

	brewkit.Main("repartition", func(ctx context.Context, cfg brewkit.Config) error {
		o.Progress = func(s string) { fmt.Println(s) } // progress on stdout: stderr is for the one line of a failure
		r, err := repartition.Run(ctx, cfg, o)
		if err != nil {
			return err
		}
		r.Print(os.Stdout)
		if !r.Equal() {
			return repartition.ErrDiffers
		}
		return nil
	})
}

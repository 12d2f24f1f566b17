// Command windows writes ten minutes of lunch orders (some out of order,
// some too late, on purpose), counts revenue per shop per minute with one
// instance of the analytics service, and checks it against a batch
// recount.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
	"github.com/brew-course/kafka/lectures/14-stream-processing/windows"
)

func main() {
	p := till.Defaults
	flag.IntVar(&p.Orders, "orders", p.Orders, "orders the till writes")
	flag.Uint64Var(&p.Seed, "seed", p.Seed, "seed of the orders")
	dir := flag.String("dir", ".state", "where the service's local store goes")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: windows [-orders 1200] [-seed 14]

The till writes lunch orders of 12 shops to a topic of the run's own, with
their event time in the payload: %.0f%% out of order (up to 25 s behind their
partition's newest, counted) and %.0f%% too late (90-150 s behind, after
their window closed: dropped). One instance of the analytics service counts
revenue per shop per minute; a batch recount of the topic checks it.

`, 100*p.OutOfOrder, 100*p.TooLate)
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(p.Orders >= 1, "orders", p.Orders, "must be at least 1")
	fc.NoArgs()
	fc.ExitOnUsageError("windows")
	brewkit.Main("windows", func(ctx context.Context, cfg brewkit.Config) error {
		res, err := windows.Run(ctx, cfg, p, *dir, func(s string) { fmt.Println(s) })
		if err != nil {
			return err
		}
		fmt.Println()
		res.Print(os.Stdout)
		return nil
	})
}

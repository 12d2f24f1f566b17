// Command exactly-once kills the analytics service with SIGKILL at ten
// seeded points (how many orders in, which stage of a batch), restarts it
// each time, every other time with its local store deleted, and holds the
// windows in its changelog to the batch recount; with -no-eos, the same
// crashes without transactions.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/analytics"
	"github.com/brew-course/kafka/lectures/14-stream-processing/exactlyonce"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "analytics" { // the drill's child: the service itself
		analytics.Main("analytics", os.Args[2:])
		return
	}
	c := exactlyonce.Defaults
	flag.IntVar(&c.Plan.Orders, "orders", c.Plan.Orders, "orders the till writes")
	flag.IntVar(&c.Crashes, "crashes", c.Crashes, "how many times the service is killed")
	flag.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the crash points")
	noEOS := flag.Bool("no-eos", false, "the service without transactions")
	flag.StringVar(&c.Dir, "dir", c.Dir, "where the service's local store goes")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: exactly-once [-orders 1200] [-crashes 10] [-seed 14] [-no-eos] [-json]

Kills the analytics service (SIGKILL) at seeded points, restarts it (every
other time with its local store deleted: it restores from the changelog),
lets a last run finish the orders, and compares every window in the
changelog with a batch recount of the orders.

`)
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(c.Plan.Orders >= 1, "orders", c.Plan.Orders, "must be at least 1")
	fc.Require(c.Crashes >= 0, "crashes", c.Crashes, "must not be negative")
	fc.NoArgs()
	fc.ExitOnUsageError("exactly-once")
	c.EOS = !*noEOS
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "exactly-once: finding this program to run the service: %v\n", err)
		os.Exit(1)
	}
	c.Service = []string{self, "analytics"}

	var progress io.Writer = os.Stdout
	if *asJSON {
		progress = io.Discard
	}
	brewkit.Main("exactly-once", func(ctx context.Context, cfg brewkit.Config) error {
		res, err := exactlyonce.Run(ctx, cfg, c, func(s string) { fmt.Fprintln(progress, s) })
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(res)
		}
		fmt.Println()
		res.Print(os.Stdout)
		return nil
	})
}

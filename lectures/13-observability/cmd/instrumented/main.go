// Command instrumented (`make instrumented`) runs Brew's kitchen-service
// with its metrics: a till places orders on brew.orders.v1 while a kitchen
// cooks them, both franz-go clients instrumented with kprom, and the
// service serves its registry on http://127.0.0.1:17081/metrics for
// Prometheus (job brew-apps). At the end it prints each metric that matters
// to on-call with its value and what it says.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/lectures/13-observability/kitchen"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	o := kitchen.Defaults
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: instrumented [flags]

The till places -rate orders a second on -topic for -for; the kitchen (group
-group) cooks each in -cook. Both clients carry kprom's hooks, and /metrics is
served on -listen while they run (empty: not served). Then the counts and what
each metric says.

`)
		flag.PrintDefaults()
	}
	flag.StringVar(&o.Topic, "topic", o.Topic, "the orders topic (created if missing: 3 partitions, RF 3)")
	flag.StringVar(&o.Group, "group", o.Group, "the kitchen's consumer group")
	flag.IntVar(&o.Rate, "rate", o.Rate, "orders a second")
	flag.DurationVar(&o.For, "for", o.For, "how long the till places orders")
	flag.DurationVar(&o.Cook, "cook", o.Cook, "how long the kitchen cooks one order")
	flag.StringVar(&o.Listen, "listen", o.Listen, "where to serve /metrics during the run")
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("topic", o.Topic)
	fc.Name("group", o.Group)
	fc.Require(o.Rate >= 1 && o.Rate <= 1000, "rate", o.Rate, "must be 1 to 1000 orders a second")
	fc.Require(o.For >= time.Second && o.For <= 10*time.Minute, "for", o.For, "must be 1s to 10m")
	fc.Require(o.Cook >= 0 && o.Cook <= time.Second, "cook", o.Cook, "must be 0 to 1s")
	fc.NoArgs()
	fc.ExitOnUsageError("instrumented")

	brewkit.Main("instrumented", func(ctx context.Context, cfg brewkit.Config) error {
		o.Progress = func(s string) { fmt.Println(s) } // progress on stdout: stderr is for the one line of a failure
		r, err := kitchen.Run(ctx, cfg, o)
		if err != nil {
			return err
		}
		kitchen.Print(os.Stdout, r)
		return nil
	})
}

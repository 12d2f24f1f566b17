// Command promo replays Brew's Friday promotion: orders at a fixed rate into
// a topic with one partition, then into one with six, each read by the same
// group of consumers; it shows live per partition and per consumer the rate
// and the lag, and at the end how long each took to drain.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/02-topics-partitions/promo"
)

// maxRate is the fastest -rate: 10,000 orders a second, beyond what the
// demo's consumers could ever drain.
const maxRate = 600_000

func main() {
	c := promo.Defaults
	flag.Float64Var(&c.PerMinute, "rate", c.PerMinute, "orders per minute")
	flag.DurationVar(&c.Duration, "duration", c.Duration, "how long orders keep coming")
	flag.IntVar(&c.Consumers, "consumers", c.Consumers, "consumers in the group")
	flag.DurationVar(&c.Work, "work", c.Work, "processing time per order")
	parts := flag.String("partitions", "1,6", "partition counts to compare, in order")
	asJSON := flag.Bool("json", false, "print the results as JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: promo [-rate 8000] [-duration 30s] [-consumers 3] [-work 20ms] [-partitions 1,6] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	var counts []int
	for _, f := range strings.Split(*parts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fc.Require(false, "partitions", *parts, "want partition counts of at least 1, comma-separated (1,6)")
			break
		}
		counts = append(counts, n)
	}
	// NaN fails both comparisons; +Inf (and any rate above the limit)
	// would write as fast as the client can, flooding the topic.
	fc.Require(c.PerMinute > 0 && c.PerMinute <= maxRate, "rate", c.PerMinute, fmt.Sprintf("must be > 0 and at most %d orders per minute", maxRate))
	fc.Require(c.Duration > 0, "duration", c.Duration, "must be > 0")
	fc.Require(c.Consumers >= 1, "consumers", c.Consumers, "must be at least 1")
	fc.Require(c.Work > 0, "work", c.Work, "must be > 0")
	fc.NoArgs()
	fc.ExitOnUsageError("promo")
	brewkit.Main("promo", func(ctx context.Context, cfg brewkit.Config) error {
		return run(ctx, cfg, c, counts, *asJSON)
	})
}

func run(ctx context.Context, cfg brewkit.Config, c promo.Config, counts []int, asJSON bool) error {
	tty := brewkit.IsTerminal(os.Stdout)
	live := brewkit.NewLive(os.Stdout)
	var results []promo.Result
	for _, n := range counts {
		look := func(v promo.View) {
			switch {
			case asJSON:
			case tty:
				var b bytes.Buffer
				v.Print(&b, c)
				live.Frame(b.String())
			default:
				fmt.Print(v.Line())
			}
		}
		r, err := promo.Run(ctx, cfg, c, n, look)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(results)
	}
	fmt.Println()
	promo.PrintSummary(os.Stdout, results)
	return nil
}

// Command scale-out adds lecture 15's fourth node to the running stand and
// moves partitions onto it under a replication throttle, while a witness
// writes and reads orders; then drains node 4 and takes it out again.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"

	"github.com/brew-course/kafka/lectures/15-operations/scaleout"
)

func main() {
	c := scaleout.Defaults
	mib := flag.Int64("preload", c.Preload>>20, "MiB written to the topic before node 4 starts")
	throttle := flag.Int64("throttle", c.Throttle>>20, "MiB/s each broker may spend copying the moving replicas")
	flag.IntVar(&c.Rate, "rate", c.Rate, "the witness' orders per second")
	keep := flag.Bool("keep", false, "leave node 4 in the cluster with its partitions (make restore takes it out)")
	asJSON := flag.Bool("json", false, "print the result as JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: scale-out [-preload %d] [-throttle %d] [-rate %d] [-keep] [-json]

Starts node 4 (a broker only) on the stand that is up (native or docker),
shows that Kafka moves nothing onto it by itself, reassigns a topic's
partitions onto it with a replication throttle, elects the preferred
leaders, then drains node 4, stops it and unregisters it. A witness writes
orders (acks=all) and reads them back throughout. make restore undoes an
interrupted run.

`, scaleout.Defaults.Preload>>20, scaleout.Defaults.Throttle>>20, scaleout.Defaults.Rate)
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(*mib >= 1 && *mib <= 512, "preload", *mib, "give 1 to 512 MiB")
	fc.Require(*throttle >= 1, "throttle", *throttle, "give at least 1 MiB/s")
	fc.Require(c.Rate >= 1 && c.Rate <= 5000, "rate", c.Rate, "give 1 to 5000 orders a second")
	fc.NoArgs()
	fc.ExitOnUsageError("scale-out")
	c.Preload, c.Throttle, c.Drain = *mib<<20, *throttle<<20, !*keep

	brewkit.Main("scale-out", func(ctx context.Context, cfg brewkit.Config) error {
		s, err := stand.FindRunning("scale-out starts and stops node 4")
		if err != nil {
			return err
		}
		if s.Current() == stand.Embedded {
			return fmt.Errorf("node 4 runs on the real stands only: `make down && make up STAND=native` (or docker)")
		}
		say := func(line string) { fmt.Println(line) }
		if *asJSON {
			say = func(string) {}
		}
		res, err := scaleout.Run(ctx, cfg, s, c, say)
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

// Command rebalance-timeline measures a rebalance under each protocol: two
// member processes share a 6-partition topic while orders flow, a third
// joins, then one is killed with SIGKILL. It prints how many partitions had no
// owner in each rebalance and for how long, and how many records were
// processed twice. `rebalance-timeline member ...` is one member process.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
	"github.com/brew-course/kafka/lectures/06-consumer-groups/timeline"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "member" {
		groups.ServeProcess("member", os.Args[2:])
		return
	}
	c := timeline.Defaults
	flag.IntVar(&c.Rate, "rate", c.Rate, "orders per second")
	flag.DurationVar(&c.Settle, "settle", c.Settle, "how long the group works between the steps")
	only := flag.String("protocol", "", "measure one protocol only: eager, cooperative or consumer")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: rebalance-timeline [-rate 100] [-settle 3s] [-protocol P] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(c.Rate >= 1, "rate", c.Rate, "must be at least 1")
	fc.Require(c.Settle > 0, "settle", c.Settle, "must be > 0")
	protocols := groups.Protocols
	if *only != "" {
		p, err := groups.ParseProtocol(*only)
		fc.Require(err == nil, "protocol", *only, "use eager, cooperative or consumer")
		protocols = []groups.Protocol{p}
	}
	fc.NoArgs()
	fc.ExitOnUsageError("rebalance-timeline")
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rebalance-timeline:", err)
		os.Exit(1)
	}
	c.Member = []string{self, "member"}
	brewkit.Main("rebalance-timeline", func(ctx context.Context, cfg brewkit.Config) error {
		rows, err := timeline.Run(ctx, cfg, c, protocols, func(s string) { fmt.Fprintln(os.Stderr, s) })
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(rows)
		}
		timeline.Print(os.Stdout, rows)
		return nil
	})
}

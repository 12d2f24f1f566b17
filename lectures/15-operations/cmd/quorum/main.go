// Command quorum shows the controllers' Raft quorum as an operator about to
// replace a controller sees it: voters and observers, static or dynamic
// (kraft.version), what AddRaftVoter and RemoveRaftVoter answer on it, and
// how many failures each quorum size survives.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"

	"github.com/brew-course/kafka/lectures/15-operations/quorum"
)

func main() {
	dynamic := flag.Bool("dynamic", false, "run the dynamic quorum on a lab cluster of its own instead (Java; about a minute)")
	rate := flag.Int("rate", 100, "with -dynamic: the witness' orders per second")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: quorum [-dynamic [-rate 100]]

DescribeQuorum's voters and observers (brokers, controllers not added yet),
the finalized kraft.version (0: a static quorum, 1: dynamic, KIP-853), and on
a static quorum the cluster's answer to AddRaftVoter and RemoveRaftVoter
(a refusal: nothing changes). On a dynamic quorum it asks nothing.

With -dynamic it leaves the stand alone and starts a lab cluster of its own
(nodes 1-3 on 127.0.0.1:19301-19303, controllers on 19311-19314, data in a
temporary folder) whose quorum is dynamic, adds controller 4 with
AddRaftVoter and removes controller 1 with RemoveRaftVoter while a witness
writes and reads orders, then stops the lab.

`)
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(*rate >= 1 && *rate <= 2000, "rate", *rate, "give 1 to 2000 orders a second")
	fc.NoArgs()
	fc.ExitOnUsageError("quorum")
	if *dynamic {
		brewkit.Main("quorum", func(ctx context.Context, _ brewkit.Config) error {
			s, err := stand.Find()
			if err != nil {
				return err
			}
			res, err := quorum.RunDynamic(ctx, s, *rate, nil, func(line string) { fmt.Println(line) })
			if err != nil {
				return err
			}
			fmt.Println()
			res.Print(os.Stdout)
			return nil
		})
		return
	}
	brewkit.Main("quorum", func(ctx context.Context, cfg brewkit.Config) error {
		res, err := quorum.Run(ctx, cfg)
		if err != nil {
			return err
		}
		res.Print(os.Stdout)
		return nil
	})
}

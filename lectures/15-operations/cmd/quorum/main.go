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

	"github.com/brew-course/kafka/lectures/15-operations/quorum"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: quorum

DescribeQuorum's voters and observers (brokers, controllers not added yet),
the finalized kraft.version (0: a static quorum, 1: dynamic, KIP-853), and on
a static quorum the cluster's answer to AddRaftVoter and RemoveRaftVoter
(a refusal: nothing changes). On a dynamic quorum it asks nothing.
`)
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.NoArgs()
	fc.ExitOnUsageError("quorum")
	brewkit.Main("quorum", func(ctx context.Context, cfg brewkit.Config) error {
		res, err := quorum.Run(ctx, cfg)
		if err != nil {
			return err
		}
		res.Print(os.Stdout)
		return nil
	})
}

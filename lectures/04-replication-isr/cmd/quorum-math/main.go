// Command quorum-math prints the 2N+1 table of the lecture and, with -live,
// shows on the stand that the Raft quorum needs a majority of its voters.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"

	"github.com/brew-course/kafka/lectures/04-replication-isr/quorummath"
)

func main() {
	n := flag.Int("nodes", 7, "largest cluster size in the table")
	live := flag.Bool("live", false, "stop two of the stand's three voters, then bring them back")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: quorum-math [-nodes 7] [-live]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(*n >= 1 && *n <= 99, "nodes", *n, "must be between 1 and 99")
	fc.NoArgs()
	fc.ExitOnUsageError("quorum-math")
	quorummath.PrintTable(os.Stdout, quorummath.Rows(*n))
	if !*live {
		return
	}
	brewkit.Main("quorum-math", runLive)
}

func runLive(ctx context.Context, cfg brewkit.Config) error {
	s, err := stand.FindRunning("-live stops and starts nodes")
	if err != nil {
		return err
	}
	fmt.Println()
	lv, err := quorummath.RunLive(ctx, cfg, s, func(line string) { fmt.Println(line) })
	if err != nil {
		return brewkit.LeftBehind(err, "nodes it stopped stay stopped: start them with `make restore`")
	}
	if lv.Simulated {
		fmt.Printf("(%s)\n", brewkit.SimulatedNote)
	}
	return nil
}

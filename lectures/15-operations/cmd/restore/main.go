// Command restore brings the course stand back to its three nodes after
// lecture 15, whatever step was interrupted: reassignments cancelled,
// partitions moved off node 4, throttles removed, node 4 stopped and
// unregistered. make restore runs it, then starts what is stopped.
package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"

	"github.com/brew-course/kafka/lectures/15-operations/restore"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: restore\n\nUndoes what lecture 15 left on the stand that is up: node 4 and its partitions, throttles, reassignments.\n")
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.NoArgs()
	fc.ExitOnUsageError("restore")
	brewkit.Main("restore", func(ctx context.Context, cfg brewkit.Config) error {
		s, err := stand.FindRunning("restore stops node 4")
		if err != nil {
			return err
		}
		d, err := restore.Run(ctx, cfg, s)
		fmt.Println(d)
		return err
	})
}

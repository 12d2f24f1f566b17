// Command isolation shows what a share group's share.isolation.level
// changes: tickets written in transactions, one aborted, read by a share
// group with read_uncommitted (every ticket) and one with read_committed
// (the committed tickets only).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/08-share-groups/isolation"
)

func main() {
	c := isolation.Defaults
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: isolation [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.NoArgs()
	fc.ExitOnUsageError("isolation")
	brewkit.Main("isolation", func(ctx context.Context, cfg brewkit.Config) error {
		r, err := isolation.Run(ctx, cfg, c, func(s string) {
			if brewkit.IsTerminal(os.Stderr) { // progress for people; a failure stays one line
				fmt.Fprintln(os.Stderr, s)
			}
		})
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(r)
		}
		r.Print(os.Stdout)
		return nil
	})
}

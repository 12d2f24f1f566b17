// Command elr shows KIP-966's eligible leader replicas on the stand: it stops
// two nodes under two topics with min.insync.replicas=2, one on three
// replicas and one on two, prints their ISR and ELR after every stop and
// start, and shows the two-replica topic electing its leader from the ELR.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"

	"github.com/brew-course/kafka/lectures/04-replication-isr/elr"
)

func main() {
	asJSON := flag.Bool("json", false, "print the result as JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: elr [-json]\n\n"+
			"Stops nodes 2 and 1 of the stand that is up in this checkout (make up), then starts them again.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.NoArgs()
	fc.ExitOnUsageError("elr")
	brewkit.Main("elr", func(ctx context.Context, cfg brewkit.Config) error {
		return brewkit.LeftBehind(run(ctx, cfg, *asJSON), "nodes it stopped stay stopped: start them with `make restore`")
	})
}

func run(ctx context.Context, cfg brewkit.Config, asJSON bool) error {
	s, err := stand.FindRunning("elr stops and starts nodes")
	if err != nil {
		return err
	}
	res, err := elr.Run(ctx, cfg, s, func(line string) { fmt.Fprintln(os.Stderr, line) })
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("%w; a node it stopped may still be stopped: `make restore` starts it", err)
	}
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(res)
	}
	res.Print(os.Stdout)
	return nil
}

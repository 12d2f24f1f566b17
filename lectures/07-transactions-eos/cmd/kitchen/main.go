// Command kitchen is Brew's kitchen-service: it reads orders in a consumer
// group and writes KitchenStarted and OrderReady for each, with exactly-once
// (one transaction per batch: events and offsets together) or, with -no-eos,
// without (write, then commit). -crash-after and -crash-at make it kill
// itself with SIGKILL in the middle of a batch.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/kitchen"
)

func main() {
	c := kitchen.Defaults
	flag.StringVar(&c.In, "in", c.In, "topic to read orders from")
	flag.StringVar(&c.Out, "out", c.Out, "topic to write kitchen events to")
	flag.StringVar(&c.Group, "group", c.Group, "consumer group")
	flag.StringVar(&c.ID, "id", c.ID, "transactional id and group instance id")
	flag.BoolVar(&c.NoEOS, "no-eos", false, "no transactions: write the events, then commit the offsets")
	flag.IntVar(&c.Batch, "batch", c.Batch, "orders per transaction")
	flag.IntVar(&c.CrashAfter, "crash-after", 0, "kill itself (SIGKILL) in the batch that reaches this many orders")
	stage := flag.String("crash-at", string(c.CrashAt), "where in that batch: poll, produce, flushed, offsets or commit")
	flag.DurationVar(&c.Idle, "idle", 0, "stop after this long without orders (0: run until Ctrl-C)")
	asJSON := flag.Bool("json", false, "print the totals as JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: kitchen [-in T] [-out T] [-group G] [-id ID] [-no-eos] [-batch 10] [-crash-after N -crash-at STAGE] [-idle D] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	st, err := kitchen.ParseStage(*stage)
	fc.Require(err == nil, "crash-at", *stage, "use poll, produce, flushed, offsets or commit")
	fc.Require(c.Batch >= 1, "batch", c.Batch, "must be at least 1")
	fc.Require(c.CrashAfter >= 0, "crash-after", c.CrashAfter, "must not be negative")
	fc.Require(c.Idle >= 0, "idle", c.Idle, "must not be negative")
	fc.Topic("in", c.In)
	fc.Topic("out", c.Out)
	fc.Name("group", c.Group)
	fc.Name("id", c.ID)
	fc.NoArgs()
	fc.ExitOnUsageError("kitchen")
	c.CrashAt = st

	// What it does goes to stdout (not with -json): stderr is for the
	// one line that says why it failed.
	var progress io.Writer = os.Stdout
	if *asJSON {
		progress = io.Discard
	}
	brewkit.Main("kitchen", func(ctx context.Context, cfg brewkit.Config) error {
		fmt.Fprintln(progress, c.Banner())
		stats, err := kitchen.Run(ctx, cfg, c, func(s string) { fmt.Fprintln(progress, s) })
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(stats)
		}
		fmt.Println(stats.Summary(c.ID))
		return nil
	})
}

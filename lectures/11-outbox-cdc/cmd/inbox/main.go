// Command inbox (`make inbox`) is kitchen-service consuming the outbox's
// events with its own database: it sends orders through the outbox (relays
// killed after Kafka's ack, so some events come twice), then runs two
// kitchens on them, each killed with SIGKILL between its database commit
// and its offset commit: one that has only the offset against a repeat, and
// one with an inbox (the event ids in the tickets' transaction). It counts
// the orders each cooked twice.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/inbox"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/outbox"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	if outbox.Subcommand("inbox") {
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "kitchen" {
		kitchen(os.Args[2:])
		return
	}
	o := inbox.Defaults
	flag.StringVar(&o.Outbox.Topic, "topic", o.Outbox.Topic, "the outbox's topic")
	flag.StringVar(&o.Outbox.Schema, "orders-schema", o.Outbox.Schema, "order-service's PostgreSQL schema (dropped and created again)")
	flag.StringVar(&o.Schema, "schema", o.Schema, "kitchen-service's PostgreSQL schema (dropped and created again)")
	flag.IntVar(&o.Outbox.Orders, "orders", o.Outbox.Orders, "orders sent through the outbox")
	flag.IntVar(&o.Outbox.RelayKills, "relay-kills", o.Outbox.RelayKills, "relay kills (at locked, acked, deleted in turn: the last two send their batch again)")
	flag.IntVar(&o.Kills, "kills", o.Kills, "how many times each kitchen is killed between its database commit and its offset commit")
	flag.IntVar(&o.Batch, "batch", o.Batch, "records a kitchen takes per poll")
	flag.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the kitchen's kill points")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: inbox [-orders 100] [-relay-kills 3] [-kills 3] [-batch 10] [-seed 5]\n\n"+
			"PostgreSQL: BREW_POSTGRES_DSN, else the stand's (127.0.0.1:15432).\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("topic", o.Outbox.Topic)
	fc.Name("schema", o.Schema)
	fc.Name("orders-schema", o.Outbox.Schema)
	fc.Require(o.Schema != o.Outbox.Schema, "schema", o.Schema, "kitchen-service's schema must not be order-service's")
	fc.Require(o.Outbox.Orders >= 1 && o.Outbox.Orders <= 100_000, "orders", o.Outbox.Orders, "must be 1 to 100000")
	fc.Require(o.Outbox.RelayKills >= 0 && o.Outbox.RelayKills <= 100, "relay-kills", o.Outbox.RelayKills, "must be 0 to 100")
	fc.Require(o.Kills >= 0 && o.Kills <= 100, "kills", o.Kills, "must be 0 to 100")
	fc.Require(o.Batch >= 1 && o.Batch <= 10_000, "batch", o.Batch, "must be 1 to 10000")
	fc.NoArgs()
	fc.ExitOnUsageError("inbox")
	o.Run = fmt.Sprintf("inbox-%d", time.Now().UnixMilli())

	brewkit.Main("inbox", func(ctx context.Context, cfg brewkit.Config) error {
		self, err := drill.Self("")
		if err != nil {
			return err
		}
		o.Command = self[:1]
		o.Progress = func(s string) { fmt.Fprintln(os.Stderr, s) }
		r, err := inbox.Run(ctx, cfg, o)
		if err != nil {
			return err
		}
		inbox.Print(os.Stdout, o, r)
		return nil
	})
}

// kitchen is `inbox kitchen FLAGS`: one kitchen-service process of the demo.
func kitchen(args []string) {
	fs := flag.NewFlagSet("inbox kitchen", flag.ExitOnError)
	k := inbox.Kitchen{Report: os.Stdout}
	mode := fs.String("mode", string(inbox.WithInbox), "offsets or inbox")
	fs.StringVar(&k.Schema, "schema", inbox.Defaults.Schema, "kitchen-service's schema")
	fs.StringVar(&k.Topic, "topic", inbox.Defaults.Outbox.Topic, "the topic to read")
	fs.StringVar(&k.Group, "group", "", "the consumer group")
	fs.IntVar(&k.Batch, "batch", inbox.Defaults.Batch, "records per poll")
	fs.IntVar(&k.KillAfter, "kill-after", 0, "get SIGKILL after the database commit of the batch that reaches this many records (0: never)")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	k.Mode = inbox.Mode(*mode)
	var fc brewkit.FlagCheck
	fc.Require(k.Mode == inbox.OffsetsOnly || k.Mode == inbox.WithInbox, "mode", *mode, "must be offsets or inbox")
	fc.Topic("topic", k.Topic)
	fc.Name("group", k.Group)
	fc.Require(k.Batch >= 1, "batch", k.Batch, "must be at least 1")
	fc.Require(fs.NArg() == 0, "group", k.Group, "takes no arguments after the flags")
	fc.ExitOnUsageError("inbox")
	brewkit.Main("inbox kitchen", func(ctx context.Context, cfg brewkit.Config) error {
		return inbox.Cook(ctx, cfg, k)
	})
}

// Command outbox (`make outbox`) is the transactional outbox: order-service
// writes each order and its outbox row in one transaction (this program's
// `orders` subcommand), and relays (`relay`) publish the outbox to Kafka,
// two at once, with FOR UPDATE SKIP LOCKED, deleting what Kafka
// acknowledged. Both are killed with SIGKILL at seeded points of every
// step; the drill counts what reached the topic: nothing lost, nothing
// invented, duplicates only where a relay died after Kafka's ack.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/outbox"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "orders":
			orders(os.Args[2:])
			return
		case "relay":
			relay(os.Args[2:])
			return
		}
	}
	o := outbox.Defaults
	flag.StringVar(&o.Topic, "topic", o.Topic, "the topic the relays publish to")
	flag.StringVar(&o.Schema, "schema", o.Schema, "order-service's PostgreSQL schema (dropped and created again)")
	flag.IntVar(&o.Orders, "orders", o.Orders, "orders to write")
	flag.IntVar(&o.WriterKills, "writer-kills", o.WriterKills, "how many times order-service is killed inside its transaction")
	flag.IntVar(&o.Relays, "relays", o.Relays, "relays at once")
	flag.IntVar(&o.Batch, "batch", o.Batch, "outbox rows a relay sends in one transaction")
	flag.IntVar(&o.RelayKills, "relay-kills", o.RelayKills, "how many times a relay is killed (at locked, acked, deleted in turn)")
	flag.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the kill points and the orders")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: outbox [-orders 200] [-writer-kills 4] [-relays 2] [-batch 10] [-relay-kills 6] [-seed 7]\n"+
			"       outbox relay [-schema outbox] [-topic T] [-batch 10] [-poll 100ms]   (a relay on its own, until Ctrl-C)\n\n"+
			"PostgreSQL: BREW_POSTGRES_DSN, else the stand's (127.0.0.1:15432).\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("topic", o.Topic)
	fc.Name("schema", o.Schema)
	fc.Require(o.Orders >= 1 && o.Orders <= 100_000, "orders", o.Orders, "must be 1 to 100000")
	fc.Require(o.WriterKills >= 0 && o.WriterKills < o.Orders && o.WriterKills <= 100, "writer-kills", o.WriterKills, "must be 0 to 100, and below -orders")
	fc.Require(o.Relays >= 1 && o.Relays <= 16, "relays", o.Relays, "must be 1 to 16")
	fc.Require(o.Batch >= 1 && o.Batch <= 10_000, "batch", o.Batch, "must be 1 to 10000")
	fc.Require(o.RelayKills >= 0 && o.RelayKills <= 100, "relay-kills", o.RelayKills, "must be 0 to 100")
	fc.NoArgs()
	fc.ExitOnUsageError("outbox")
	o.Run = fmt.Sprintf("outbox-%d", time.Now().UnixMilli())

	brewkit.Main("outbox", func(ctx context.Context, cfg brewkit.Config) error {
		self, err := drill.Self("")
		if err != nil {
			return err
		}
		o.Command = self[:1]
		o.Progress = func(s string) { fmt.Fprintln(os.Stderr, s) }
		r, err := outbox.Run(ctx, cfg, o)
		if err != nil {
			return err
		}
		outbox.Print(os.Stdout, o, r)
		return nil
	})
}

// orders is `outbox orders FLAGS`: one order-service process of the drill.
func orders(args []string) {
	fs := flag.NewFlagSet("outbox orders", flag.ExitOnError)
	var w outbox.Writer
	fs.StringVar(&w.Schema, "schema", outbox.Defaults.Schema, "order-service's schema")
	fs.StringVar(&w.Run, "run", "", "the run the orders belong to")
	fs.Uint64Var(&w.Seed, "seed", outbox.Defaults.Seed, "seed of the orders")
	fs.IntVar(&w.From, "from", 0, "the first order")
	fs.IntVar(&w.To, "to", outbox.Defaults.Orders, "the order after the last")
	fs.IntVar(&w.KillAt, "kill-at", -1, "get SIGKILL inside this order's transaction (-1: never)")
	stage := fs.String("kill-stage", string(outbox.BeforeCommit), "where: order (after the order's INSERT) or outbox (before COMMIT)")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	w.KillStage = outbox.Stage(*stage)
	var fc brewkit.FlagCheck
	fc.Require(w.KillStage == outbox.AfterOrder || w.KillStage == outbox.BeforeCommit, "kill-stage", *stage, "must be order or outbox")
	fc.Require(fs.NArg() == 0, "run", w.Run, "takes no arguments after the flags")
	fc.ExitOnUsageError("outbox orders")
	brewkit.Main("outbox orders", func(ctx context.Context, _ brewkit.Config) error {
		return outbox.WriteOrders(ctx, w)
	})
}

// relay is `outbox relay FLAGS`: one relay, the drill's or on its own.
func relay(args []string) {
	fs := flag.NewFlagSet("outbox relay", flag.ExitOnError)
	r := outbox.Relay{Report: os.Stdout}
	fs.StringVar(&r.Schema, "schema", outbox.Defaults.Schema, "order-service's schema")
	fs.StringVar(&r.Topic, "topic", outbox.Defaults.Topic, "the topic to publish to")
	fs.IntVar(&r.Batch, "batch", outbox.Defaults.Batch, "outbox rows per transaction")
	fs.DurationVar(&r.Poll, "poll", 100*time.Millisecond, "the wait after a poll that found nothing")
	fs.BoolVar(&r.UntilEmpty, "until-empty", false, "stop at the first poll that finds nothing")
	kills := fs.String("kills", "", "the drill's kill plan: stage:outbox-id,...")
	fs.StringVar(&r.Fired, "fired", "", "the drill's folder of fired kills")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	var fc brewkit.FlagCheck
	fc.Topic("topic", r.Topic)
	fc.Name("schema", r.Schema)
	fc.Require(r.Batch >= 1 && r.Batch <= 10_000, "batch", r.Batch, "must be 1 to 10000")
	fc.Require(r.Poll > 0, "poll", r.Poll, "must be positive")
	plan, err := outbox.ParseKills(*kills)
	fc.Require(err == nil, "kills", *kills, fmt.Sprint(err))
	fc.Require(len(plan) == 0 || r.Fired != "", "fired", r.Fired, "a kill plan needs the folder of fired kills")
	fc.Require(fs.NArg() == 0, "topic", r.Topic, "takes no arguments after the flags")
	fc.ExitOnUsageError("outbox") // the usage of `outbox -h` names the relay's flags too
	r.Kills = plan
	if !r.UntilEmpty {
		r.Report = nil // on its own: the summary line only
	}
	brewkit.Main("outbox relay", func(ctx context.Context, cfg brewkit.Config) error {
		st, err := outbox.RunRelay(ctx, cfg, r)
		if !r.UntilEmpty {
			fmt.Fprintf(os.Stderr, "outbox relay: %d events in %d batches\n", st.Events, st.Batches)
		}
		return err
	})
}

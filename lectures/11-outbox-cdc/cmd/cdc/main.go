// Command cdc (`make cdc`) is order-service's outbox read from PostgreSQL's
// write-ahead log: a reader of a logical replication slot (pgoutput, this
// program's `reader` subcommand) publishes each committed outbox row to
// Kafka and acknowledges the slot only after Kafka acknowledged. The demo
// kills the reader with SIGKILL at seeded orders while order-service
// writes, measures the WAL the slot holds while no reader runs, drops the
// slot, and counts what reached the topic.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/cdc"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "reader" {
		reader(os.Args[2:])
		return
	}
	o := cdc.Defaults
	flag.StringVar(&o.Topic, "topic", o.Topic, "the topic of the OrderPlaced events")
	flag.StringVar(&o.Schema, "schema", o.Schema, "order-service's PostgreSQL schema (dropped and created again)")
	flag.StringVar(&o.Slot, "slot", o.Slot, "the logical replication slot (dropped at the start and at the end)")
	flag.StringVar(&o.Publication, "publication", o.Publication, "the publication on the outbox table")
	flag.IntVar(&o.Orders, "orders", o.Orders, "orders written while the reader is killed")
	flag.IntVar(&o.Kills, "kills", o.Kills, "how many times the reader is killed")
	flag.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the kill points and the orders")
	flag.DurationVar(&o.Every, "every", o.Every, "order-service's pace during the kill drill: one order every")
	flag.IntVar(&o.Down, "down", o.Down, "orders written while no reader runs")
	flag.DurationVar(&o.AckEvery, "ack-every", o.AckEvery, "the readers flush the producer and acknowledge the slot this often")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: cdc [-orders 100] [-kills 5] [-down 1000] [-every 10ms] [-ack-every 200ms] [-seed 11] [-topic T] [-schema S] [-slot S] [-publication P]\n\n"+
			"PostgreSQL: BREW_POSTGRES_DSN, else the stand's (127.0.0.1:15432).\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("topic", o.Topic)
	fc.Name("schema", o.Schema)
	fc.Require(slotName(o.Slot), "slot", o.Slot, "a slot name is 1 to 63 lower-case letters, digits and '_'")
	fc.Name("publication", o.Publication)
	fc.Require(o.Orders >= 1 && o.Orders <= 100_000, "orders", o.Orders, "must be 1 to 100000")
	fc.Require(o.Kills >= 0 && o.Kills <= 100 && o.Kills <= o.Orders-max(1, o.Orders/5), "kills", o.Kills, "must be 0 to 100, and at most 4/5 of -orders")
	fc.Require(o.Every >= 0 && o.Every <= time.Second, "every", o.Every, "must be 0 to 1s")
	fc.Require(o.Down >= 1 && o.Down <= 100_000, "down", o.Down, "must be 1 to 100000")
	fc.Require(o.AckEvery >= time.Millisecond && o.AckEvery <= 10*time.Second, "ack-every", o.AckEvery, "must be 1ms to 10s")
	fc.NoArgs()
	fc.ExitOnUsageError("cdc")
	o.Run = fmt.Sprintf("cdc-%d", time.Now().UnixMilli())

	brewkit.Main("cdc", func(ctx context.Context, cfg brewkit.Config) error {
		self, err := drill.Self("reader")
		if err != nil {
			return err
		}
		o.Command = self
		o.Progress = func(s string) { fmt.Fprintln(os.Stderr, s) }
		r, err := cdc.Run(ctx, cfg, o)
		if err != nil {
			return brewkit.LeftBehind(err, "nothing: the slot "+o.Slot+" is dropped on the way out")
		}
		cdc.Print(os.Stdout, o, r)
		return nil
	})
}

// slotName: PostgreSQL's rule for replication slot names.
func slotName(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// reader is `cdc reader FLAGS`: one WAL reader process, streaming until
// SIGTERM (or its kill point).
func reader(args []string) {
	fs := flag.NewFlagSet("cdc reader", flag.ExitOnError)
	r := cdc.ReaderDefaults
	fs.StringVar(&r.Slot, "slot", cdc.Defaults.Slot, "the replication slot")
	fs.StringVar(&r.Publication, "publication", cdc.Defaults.Publication, "the publication")
	fs.StringVar(&r.Topic, "topic", cdc.Defaults.Topic, "the events' topic")
	fs.DurationVar(&r.AckEvery, "ack-every", r.AckEvery, "flush the producer and acknowledge the slot this often")
	kill := fs.String("kill-at", "", "get SIGKILL at STAGE@ORDER: received@N (decoded, not produced), kafka-acked@N (not yet acknowledged to the slot)")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	k, err := cdc.ParseKill(*kill)
	if err != nil || fs.NArg() > 0 || r.AckEvery <= 0 {
		fmt.Fprintf(os.Stderr, "cdc reader: -kill-at %s -ack-every %s: %v\n", *kill, r.AckEvery, err)
		os.Exit(2)
	}
	r.Kill = k
	brewkit.Main("cdc reader", func(ctx context.Context, cfg brewkit.Config) error {
		return r.Stream(ctx, cfg)
	})
}

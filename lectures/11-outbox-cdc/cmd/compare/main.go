// Command compare (`make compare`) runs the lecture's three producers of
// OrderPlaced events on the same load, one after the other: the outbox
// relay, the Go WAL reader and Debezium on Kafka Connect. For each it
// prints the events per second of draining a backlog, the latency from
// COMMIT to the consumer at a steady pace (p50, p99), the load on
// PostgreSQL and the producer's memory.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/cdc"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/compare"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/debezium"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/outbox"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "relay":
			relay(os.Args[2:])
			return
		case "reader":
			reader(os.Args[2:])
			return
		}
	}
	o := compare.Defaults
	producers := flag.String("producers", "relay,cdc,debezium", "which producers to run, in this order")
	connect := flag.String("connect", debezium.ConnectURL(), "Kafka Connect's REST API (BREW_CONNECT_URL)")
	flag.IntVar(&o.Backlog, "backlog", o.Backlog, "orders written before each producer starts")
	flag.IntVar(&o.Steady, "steady", o.Steady, "orders written at the steady pace once it runs")
	flag.DurationVar(&o.Every, "every", o.Every, "the steady pace: one order every")
	flag.StringVar(&o.Name, "name", o.Name, "prefix of each producer's schema, slot, connector and topic")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: compare [-producers relay,cdc,debezium] [-backlog 2000] [-steady 300] [-every 5ms] [-name compare] [-connect URL]\n\n"+
			"PostgreSQL: BREW_POSTGRES_DSN, else the stand's (127.0.0.1:15432).\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	ps, err := compare.ParseProducers(*producers)
	fc.Require(err == nil, "producers", *producers, fmt.Sprint(err))
	fc.Require(o.Backlog >= 2 && o.Backlog <= 100_000, "backlog", o.Backlog, "must be 2 to 100000")
	fc.Require(o.Steady >= 1 && o.Steady <= 100_000, "steady", o.Steady, "must be 1 to 100000")
	fc.Require(o.Every > 0 && o.Every <= time.Second, "every", o.Every, "must be more than 0, at most 1s")
	fc.Require(o.Name != "" && strings.Trim(o.Name, "abcdefghijklmnopqrstuvwxyz0123456789_") == "" && len(o.Name) <= 40, "name", o.Name,
		"1 to 40 lower-case letters, digits and '_' (it names slots)")
	fc.Name("connect", *connect)
	fc.NoArgs()
	fc.ExitOnUsageError("compare")
	o.Producers = ps
	o.Run = fmt.Sprintf("compare-%d", time.Now().UnixMilli())
	o.Connect = debezium.NewConnect(*connect)

	brewkit.Main("compare", func(ctx context.Context, cfg brewkit.Config) error {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		o.Command = []string{self}
		if w, err := debezium.NewStandWorker(os.Stderr); err == nil {
			o.Worker = w
		}
		o.Progress = func(s string) { fmt.Fprintln(os.Stderr, s) }
		r, err := compare.Run(ctx, cfg, o)
		if err != nil {
			return brewkit.LeftBehind(err, "nothing: each producer's slot and connector are removed on the way out")
		}
		compare.Print(os.Stdout, o, r)
		return nil
	})
}

// relay is `compare relay -schema S -topic T`: the outbox relay of package
// outbox, as its part runs it, until SIGTERM.
func relay(args []string) {
	fs := flag.NewFlagSet("compare relay", flag.ExitOnError)
	r := outbox.Relay{Batch: compare.RelayBatch, Poll: compare.RelayPoll}
	fs.StringVar(&r.Schema, "schema", "", "the outbox's schema")
	fs.StringVar(&r.Topic, "topic", "", "the events' topic")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	brewkit.Main("compare relay", func(ctx context.Context, cfg brewkit.Config) error {
		_, err := outbox.RunRelay(ctx, cfg, r)
		return err
	})
}

// reader is `compare reader -slot S -publication P -topic T`: the cdc
// reader, until SIGTERM.
func reader(args []string) {
	fs := flag.NewFlagSet("compare reader", flag.ExitOnError)
	r := cdc.ReaderDefaults
	fs.StringVar(&r.Slot, "slot", "", "the replication slot")
	fs.StringVar(&r.Publication, "publication", "", "the publication")
	fs.StringVar(&r.Topic, "topic", "", "the events' topic")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	brewkit.Main("compare reader", func(ctx context.Context, cfg brewkit.Config) error {
		return r.Stream(ctx, cfg)
	})
}

// Command dual-write (`make dual-write`) is order-service writing each order
// to its PostgreSQL table and to Kafka as two separate writes. For each order
// of the two writes (row then event, event then row, the event inside the
// row's transaction) it runs writer processes (this program's `writer`
// subcommand), kills each with SIGKILL between its two writes at seeded
// orders, and counts the orders in the table with no event and the events
// with no order.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/dualwrite"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "writer" {
		writer(os.Args[2:])
		return
	}
	o := dualwrite.Defaults
	flag.StringVar(&o.Topic, "topic", o.Topic, "the topic of the OrderPlaced events")
	flag.StringVar(&o.Schema, "schema", o.Schema, "order-service's PostgreSQL schema (dropped and created again)")
	flag.IntVar(&o.Orders, "orders", o.Orders, "orders written in each order of the writes")
	flag.IntVar(&o.Kills, "kills", o.Kills, "how many times the writer is killed in each")
	flag.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the kill points and the orders")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: dual-write [-orders 100] [-kills 5] [-seed 11] [-topic T] [-schema S]\n\n"+
			"PostgreSQL: BREW_POSTGRES_DSN, else the stand's (127.0.0.1:15432).\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("topic", o.Topic)
	fc.Name("schema", o.Schema)
	fc.Require(o.Orders >= 1 && o.Orders <= 100_000, "orders", o.Orders, "must be 1 to 100000")
	fc.Require(o.Kills >= 0 && o.Kills <= o.Orders && o.Kills <= 100, "kills", o.Kills, "must be 0 to 100, and at most -orders")
	fc.NoArgs()
	fc.ExitOnUsageError("dual-write")
	o.Run = fmt.Sprintf("dual-write-%d", time.Now().UnixMilli())

	brewkit.Main("dual-write", func(ctx context.Context, cfg brewkit.Config) error {
		self, err := drill.Self("writer")
		if err != nil {
			return err
		}
		o.Command = self
		o.Progress = func(s string) { fmt.Fprintln(os.Stderr, s) }
		r, err := dualwrite.Run(ctx, cfg, o)
		if err != nil {
			return err
		}
		dualwrite.Print(os.Stdout, o, r)
		return nil
	})
}

// writer is `dual-write writer FLAGS`: one order-service process, with the
// flags the demo gives it.
func writer(args []string) {
	fs := flag.NewFlagSet("dual-write writer", flag.ExitOnError)
	var w dualwrite.Writer
	mode := fs.String("mode", string(dualwrite.RowFirst), "row-first, event-first or in-tx")
	fs.StringVar(&w.Topic, "topic", dualwrite.Defaults.Topic, "the events' topic")
	fs.StringVar(&w.Schema, "schema", dualwrite.Defaults.Schema, "order-service's schema")
	fs.StringVar(&w.Run, "run", "", "the run the rows and events belong to")
	fs.Uint64Var(&w.Seed, "seed", dualwrite.Defaults.Seed, "seed of the orders")
	fs.IntVar(&w.From, "from", 0, "the first order")
	fs.IntVar(&w.To, "to", dualwrite.Defaults.Orders, "the order after the last")
	fs.IntVar(&w.KillAt, "kill-at", -1, "get SIGKILL between the two writes of this order (-1: never)")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	m, err := dualwrite.ParseMode(*mode)
	if err != nil || fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "dual-write writer: -mode %s: %v\n", *mode, err)
		os.Exit(2)
	}
	w.Mode = m
	brewkit.Main("dual-write writer", func(ctx context.Context, cfg brewkit.Config) error {
		t, err := dualwrite.Write(ctx, cfg, w)
		if err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(t)
	})
}

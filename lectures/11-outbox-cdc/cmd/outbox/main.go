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
	if outbox.Subcommand("outbox") {
		return
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

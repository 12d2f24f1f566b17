// Command debezium (`make debezium`) is the cdc pipeline on Kafka Connect:
// it registers Debezium's PostgreSQL connector with the outbox event router
// on order-service's outbox through Connect's REST API, shows a record and
// the connector's offset, kills the worker with SIGKILL while order-service
// writes and starts it again through the stand, counts what reached the
// topic, and deletes the connector, its offsets and its slot.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/debezium"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	o := debezium.Defaults
	connect := flag.String("connect", debezium.ConnectURL(), "Kafka Connect's REST API (BREW_CONNECT_URL)")
	flag.StringVar(&o.Connector, "connector", o.Connector, "the connector's name (deleted first if it exists, and at the end)")
	flag.StringVar(&o.Topic, "topic", o.Topic, "the topic of the OrderPlaced events")
	flag.StringVar(&o.Schema, "schema", o.Schema, "order-service's PostgreSQL schema (dropped and created again)")
	flag.StringVar(&o.Slot, "slot", o.Slot, "the connector's replication slot (dropped at the start and at the end)")
	flag.StringVar(&o.Publication, "publication", o.Publication, "the publication on the outbox table")
	flag.IntVar(&o.Orders, "orders", o.Orders, "orders order-service writes")
	flag.DurationVar(&o.Every, "every", o.Every, "order-service's pace: one order every")
	flag.StringVar(&o.OffsetsTopic, "offsets-topic", o.OffsetsTopic, "the worker's offset.storage.topic")
	flag.IntVar(&o.KillAt, "kill-at", o.KillAt, "kill -9 the Connect worker once this order committed, and start it again (-1: never)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: debezium [-orders 200] [-every 20ms] [-kill-at 80] [-connector N] [-topic T] [-schema S] [-slot S] [-publication P] [-connect URL]\n\n"+
			"PostgreSQL: BREW_POSTGRES_DSN, else the stand's (127.0.0.1:15432).\n"+
			"The worker is killed and started through the stand's service control (scripts/brewstand services).\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("topic", o.Topic)
	fc.Name("connector", o.Connector)
	fc.Name("schema", o.Schema)
	fc.Require(slotName(o.Slot), "slot", o.Slot, "a slot name is 1 to 63 lower-case letters, digits and '_'")
	fc.Name("publication", o.Publication)
	fc.Name("connect", *connect)
	fc.Topic("offsets-topic", o.OffsetsTopic)
	fc.Require(o.Orders >= 1 && o.Orders <= 100_000, "orders", o.Orders, "must be 1 to 100000")
	fc.Require(o.Every >= 0 && o.Every <= time.Second, "every", o.Every, "must be 0 to 1s")
	fc.Require(o.KillAt >= -1 && o.KillAt < o.Orders, "kill-at", o.KillAt, "must be -1 (no kill) or an order below -orders")
	fc.NoArgs()
	fc.ExitOnUsageError("debezium")
	o.Run = fmt.Sprintf("debezium-%d", time.Now().UnixMilli())
	o.Connect = debezium.NewConnect(*connect)

	brewkit.Main("debezium", func(ctx context.Context, cfg brewkit.Config) error {
		if o.KillAt >= 0 {
			// Its error, if any, is Run's once Kafka answered (Ready).
			o.Worker, _ = debezium.NewStandWorker(os.Stderr)
		}
		o.Progress = func(s string) { fmt.Fprintln(os.Stderr, s) }
		r, err := debezium.Run(ctx, cfg, o)
		if err != nil {
			return brewkit.LeftBehind(err, "nothing: the connector "+o.Connector+" and the slot "+o.Slot+" are removed on the way out")
		}
		debezium.Print(os.Stdout, o, r)
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

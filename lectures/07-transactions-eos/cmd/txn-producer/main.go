// Command txn-producer writes each order's OrderPlaced (to brew.orders.v1) and
// PaymentReceived (to brew.payments.v1) in one transaction, aborting every Nth
// transaction, and prints each outcome with the producer id and epoch.
package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/txns"
)

func main() {
	c := txns.WriteConfig{ID: "brew.order-service", Orders: brewkit.Orders.Name, Payments: brewkit.Payments.Name}
	flag.StringVar(&c.ID, "id", c.ID, "transactional id")
	flag.IntVar(&c.Transactions, "n", 6, "transactions to run")
	flag.IntVar(&c.AbortEvery, "abort-every", 3, "abort every Nth transaction (0: commit all)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: txn-producer [-id ID] [-n 6] [-abort-every 3]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(c.Transactions >= 1, "n", c.Transactions, "must be at least 1")
	fc.Require(c.AbortEvery >= 0, "abort-every", c.AbortEvery, "must not be negative")
	fc.Name("id", c.ID)
	fc.NoArgs()
	fc.ExitOnUsageError("txn-producer")
	c.FirstOrder = time.Now().Unix() % 1e6 * 10 // fresh order ids on every run
	brewkit.Main("txn-producer", func(ctx context.Context, cfg brewkit.Config) error {
		fmt.Printf("transactional id %s: %s + %s\n", c.ID, c.Orders, c.Payments)
		return txns.Write(ctx, cfg, c, func(o txns.Outcome) { fmt.Println(o) })
	})
}

// Command demo-rebalance shows a rebalance in one terminal: member processes
// m1, m2 and m3 join a group one after another while orders flow, then m2
// leaves; it prints every member's assignments, revocations and processed
// orders as they happen, and after each step who owns which partition.
// `demo-rebalance member ...` is one member process.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/demorebalance"
	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "member" {
		groups.ServeProcess("member", os.Args[2:])
		return
	}
	c := demorebalance.Defaults
	proto := flag.String("protocol", string(c.Protocol), groups.ProtocolUsage)
	flag.DurationVar(&c.Hold, "hold", c.Hold, "how long each step runs once the group has settled")
	flag.IntVar(&c.Rate, "rate", c.Rate, "orders per second")
	flag.DurationVar(&c.Work, "work", c.Work, "processing time per order")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: demo-rebalance [-protocol eager|cooperative|consumer] [-hold 5s] [-rate 3] [-work 100ms]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	p, err := groups.ParseProtocol(*proto)
	fc.Require(err == nil, "protocol", *proto, "use eager, cooperative or consumer")
	fc.Require(c.Hold >= 0, "hold", c.Hold, "must not be negative")
	fc.Require(c.Rate >= 1, "rate", c.Rate, "must be at least 1")
	fc.Require(c.Work >= 0, "work", c.Work, "must not be negative")
	fc.NoArgs()
	fc.ExitOnUsageError("demo-rebalance")
	c.Protocol = p
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo-rebalance:", err)
		os.Exit(1)
	}
	c.Member = []string{self, "member"}
	brewkit.Main("demo-rebalance", func(ctx context.Context, cfg brewkit.Config) error {
		_, err := demorebalance.Run(ctx, cfg, c, os.Stdout)
		return err
	})
}

// Command preferred-leader shows how leadership is spread over the nodes,
// runs a preferred leader election, and shows it again.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/04-replication-isr/isr"
)

func main() {
	topic := flag.String("topic", brewkit.Orders.Name, "topic to rebalance")
	dry := flag.Bool("dry-run", false, "only show the balance")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: preferred-leader [-topic T] [-dry-run]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("topic", *topic)
	fc.NoArgs()
	fc.ExitOnUsageError("preferred-leader")
	brewkit.Main("preferred-leader", func(ctx context.Context, cfg brewkit.Config) error {
		return run(ctx, cfg, *topic, *dry)
	})
}

func run(ctx context.Context, cfg brewkit.Config, topic string, dry bool) error {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	t, err := isr.Snapshot(ctx, adm, topic)
	if err != nil {
		return err
	}
	fmt.Printf("Before (%s):\n", topic)
	t.PrintBalance(os.Stdout)
	if simulated, err := brewkit.IsSimulated(ctx, cl); err == nil && simulated {
		fmt.Println("(embedded simulation: kfake always leads from the first replica, so leadership never drifts from the preferred replicas; use the native stand to see it)")
	}
	off := t.NotPreferred()
	if dry || len(off) == 0 {
		return nil
	}
	var ids []int32
	for _, p := range off {
		ids = append(ids, p.ID)
	}
	fmt.Printf("\nElecting the preferred leader of partitions %v...\n", ids)
	if err := isr.ElectPreferred(ctx, adm, topic, ids); err != nil {
		return err
	}
	err = brewkit.WaitFor(ctx, 30*time.Second, 200*time.Millisecond, func() bool {
		t, err = isr.Snapshot(ctx, adm, topic)
		return err == nil && len(t.NotPreferred()) == 0
	})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return fmt.Errorf("leaders did not move within 30 s; is every preferred replica in sync? (make restore)")
	}
	fmt.Println("\nAfter:")
	t.PrintBalance(os.Stdout)
	return nil
}

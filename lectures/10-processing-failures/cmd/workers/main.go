// Command workers (`make workers`) books the same kind of batch three ways
// (one loop; a goroutine per partition; a worker per key hash with ordered
// commits) at a partner that takes 20 ms a booking, and prints the
// throughput of each, the events booked out of their order's order, and
// what was left uncommitted.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/lectures/10-processing-failures/notes"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/lectures/10-processing-failures/workers"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	o := workers.Defaults
	addr := flag.String("partner", partner.DefaultAddr, "the partner API (started in this process when none answers)")
	flag.StringVar(&o.Topic, "topic", o.Topic, "the orders topic")
	flag.IntVar(&o.Orders, "events", o.Orders, "events to book")
	flag.IntVar(&o.Keys, "orders", o.Keys, "orders the events belong to (keys)")
	flag.DurationVar(&o.Latency, "latency", o.Latency, "the partner's time per booking")
	flag.IntVar(&o.Workers, "workers", o.Workers, "workers of the key mode")
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("topic", o.Topic)
	fc.Require(o.Orders >= 1 && o.Orders <= 100_000, "events", o.Orders, "must be 1 to 100000")
	fc.Require(o.Keys >= 1 && o.Keys <= o.Orders, "orders", o.Keys, "must be 1 to -events")
	fc.Require(o.Latency >= 0 && o.Latency <= time.Second, "latency", o.Latency, "must be 0 to 1s")
	fc.Require(o.Workers >= 1 && o.Workers <= 256, "workers", o.Workers, "must be 1 to 256")
	fc.NoArgs()
	fc.ExitOnUsageError("workers")
	o.Run = fmt.Sprintf("workers-%d", time.Now().UnixMilli())

	brewkit.Main("workers", func(ctx context.Context, cfg brewkit.Config) error {
		nt := notes.Stderr() // piped, a failure is one line: the note waits for success
		p, own, err := partner.Ensure(ctx, *addr)
		if err != nil {
			return err
		}
		if own != nil {
			defer own.Close()
			nt.Note(fmt.Sprintf("partner: none answered on %s: started one in this process (`make partner` runs it on its own)", *addr))
		}
		o.Partner = p
		rows, err := workers.Table(ctx, cfg, o, nt.Progress)
		if err != nil {
			return err
		}
		nt.Done()
		workers.Print(os.Stdout, o, rows)
		return nil
	})
}

// Command naive runs the courier most first versions are (`make naive`): it
// books each order inside the poll loop and retries a failed booking right
// there, forever. It writes a run's orders (one of them poison), takes the
// partner down for a few seconds, and prints what the loop did to the
// partner, the partitions and the group; -restarts N makes it crash on the
// poison order and restart, N times (`make naive-crash`).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/lectures/10-processing-failures/naive"
	"github.com/brew-course/kafka/lectures/10-processing-failures/notes"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	o := naive.Defaults
	addr := flag.String("partner", partner.DefaultAddr, "the partner API (started in this process when none answers)")
	flag.StringVar(&o.Topic, "topic", o.Topic, "the orders topic")
	flag.IntVar(&o.Orders, "orders", o.Orders, "orders to write")
	flag.IntVar(&o.Poison, "poison", o.Poison, "which order (0-based) is poison; -1: none")
	flag.DurationVar(&o.Outage, "outage", o.Outage, "the partner answers 503 for this long from the start")
	flag.DurationVar(&o.Backoff, "backoff", o.Backoff, "the loop's sleep between two tries of a record")
	flag.DurationVar(&o.Watch, "watch", o.Watch, "how long to go on after the outage")
	flag.IntVar(&o.Restarts, "restarts", 0, "crash on the poison order and restart this many times")
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("topic", o.Topic)
	fc.Require(o.Orders >= 1 && o.Orders <= 100_000, "orders", o.Orders, "must be 1 to 100000")
	fc.Require(o.Poison >= -1 && o.Poison < o.Orders, "poison", o.Poison, "must be -1 or below -orders")
	fc.Require(o.Outage >= 0, "outage", o.Outage, "must not be negative")
	fc.Require(o.Backoff > 0, "backoff", o.Backoff, "must be positive")
	fc.Require(o.Watch > 0, "watch", o.Watch, "must be positive")
	fc.Require(o.Restarts >= 0 && o.Restarts <= 20, "restarts", o.Restarts, "must be 0 to 20")
	fc.Require(o.Restarts == 0 || o.Poison >= 0, "restarts", o.Restarts, "needs a poison order (-poison)")
	fc.NoArgs()
	fc.ExitOnUsageError("naive")
	o.Run = fmt.Sprintf("naive-%d", time.Now().UnixMilli())

	brewkit.Main("naive", func(ctx context.Context, cfg brewkit.Config) error {
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
		o.Progress = func(s naive.Second) {
			nt.Progress(fmt.Sprintf("%4s  partner calls %4d  booked %3d  lag %3d", s.At, s.Calls, s.Booked, s.Lag))
		}
		r, err := naive.Run(ctx, cfg, o)
		if err != nil {
			return err
		}
		nt.Done()
		naive.Print(os.Stdout, o, r)
		return nil
	})
}

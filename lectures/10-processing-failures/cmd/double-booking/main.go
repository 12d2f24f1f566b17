// Command double-booking (`make double-booking`) books a batch of orders at a
// partner that sometimes stores a booking and does not answer, twice: with no
// idempotency key, and with the order id as the key; it prints how many
// orders each run booked twice.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/lectures/10-processing-failures/doublebooking"
	"github.com/brew-course/kafka/lectures/10-processing-failures/notes"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	o := doublebooking.Defaults
	addr := flag.String("partner", partner.DefaultAddr, "the partner API (started in this process when none answers)")
	flag.StringVar(&o.Topic, "topic", o.Topic, "the orders topic")
	flag.IntVar(&o.Orders, "orders", o.Orders, "orders to book")
	flag.DurationVar(&o.Timeout, "timeout", o.Timeout, "the courier's bound on one booking call")
	flag.Float64Var(&o.Share, "share", o.Share, "share of new bookings the partner stores and does not answer, 0 to 0.9")
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("topic", o.Topic)
	fc.Require(o.Orders >= 1 && o.Orders <= 10_000, "orders", o.Orders, "must be 1 to 10000")
	fc.Require(o.Timeout >= 10*time.Millisecond && o.Timeout <= 10*time.Second, "timeout", o.Timeout, "must be 10ms to 10s")
	fc.Require(o.Share >= 0 && o.Share <= 0.9, "share", o.Share, "must be 0 to 0.9")
	fc.NoArgs()
	fc.ExitOnUsageError("double-booking")
	o.Run = fmt.Sprintf("double-%d", time.Now().UnixMilli())

	brewkit.Main("double-booking", func(ctx context.Context, cfg brewkit.Config) error {
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
		rows, err := doublebooking.Run(ctx, cfg, o)
		if err != nil {
			return err
		}
		nt.Done()
		doublebooking.Print(os.Stdout, o, rows)
		return nil
	})
}

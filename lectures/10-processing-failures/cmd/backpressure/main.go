// Command backpressure (`make backpressure`) runs courier-service twice
// through a rush hour: 50,000 orders in 4 s while the partner is slow. Once
// with a bounded queue that pauses fetching when it is full, once with a
// queue without a limit; each courier is a process of its own, so that its
// memory (VmRSS, Linux) is its own. It prints each second of both runs (lag,
// queue, memory) and a summary. `backpressure courier ...` is one courier
// process.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/brew-course/kafka/lectures/10-processing-failures/backpressure"
	"github.com/brew-course/kafka/lectures/10-processing-failures/notes"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "courier" {
		backpressure.Child("backpressure", os.Args[2:])
		return
	}
	o := backpressure.Defaults
	addr := flag.String("partner", partner.DefaultAddr, "the partner API (started in this process when none answers)")
	flag.StringVar(&o.Topic, "topic", o.Topic, "the rush's orders topic (its own, kept an hour: a run writes 130 MB; brew.orders.v1 works too)")
	flag.IntVar(&o.Orders, "orders", o.Orders, "orders written in each mode's run")
	flag.IntVar(&o.Pad, "pad", o.Pad, "bytes of padding in each order")
	flag.IntVar(&o.Rate, "rate", o.Rate, "orders written per second")
	flag.DurationVar(&o.Slow, "slow", o.Slow, "how long the partner is slow, from the start")
	flag.DurationVar(&o.Latency, "latency", o.Latency, "the slow partner's time per booking")
	flag.IntVar(&o.Workers, "workers", o.Workers, "workers booking at the partner")
	flag.IntVar(&o.Queue, "queue", o.Queue, "the bounded queue's size (it resumes at a quarter)")
	flag.DurationVar(&o.Watch, "watch", o.Watch, "how many seconds of each run the table shows")
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("topic", o.Topic)
	fc.Require(o.Orders >= 1 && o.Orders <= 1_000_000, "orders", o.Orders, "must be 1 to 1000000")
	fc.Require(o.Pad >= 0 && o.Pad <= 64<<10, "pad", o.Pad, "must be 0 to 65536")
	fc.Require(o.Rate >= 10 && o.Rate <= 1_000_000, "rate", o.Rate, "must be 10 to 1000000")
	fc.Require(o.Slow >= 0 && o.Slow <= 10*time.Minute, "slow", o.Slow, "must be 0 to 10m")
	fc.Require(o.Latency >= 0 && o.Latency <= 2*time.Second, "latency", o.Latency, "must be 0 to 2s (the courier's call timeout)")
	fc.Require(o.Workers >= 1 && o.Workers <= 1024, "workers", o.Workers, "must be 1 to 1024")
	fc.Require(o.Queue >= 4 && o.Queue <= 1_000_000, "queue", o.Queue, "must be 4 to 1000000")
	fc.Require(o.Watch >= time.Second && o.Watch <= 10*time.Minute, "watch", o.Watch, "must be 1s to 10m")
	fc.NoArgs()
	fc.ExitOnUsageError("backpressure")
	o.Run = fmt.Sprintf("bp-%d", time.Now().UnixMilli())
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "backpressure:", err)
		os.Exit(1)
	}
	o.Courier = []string{self, "courier"}

	brewkit.Main("backpressure", func(ctx context.Context, cfg brewkit.Config) error {
		nt := notes.Stderr() // piped, a failure is one line: the note waits for success
		p, own, err := partner.Ensure(ctx, *addr)
		if err != nil {
			return err
		}
		if own != nil {
			defer own.Close()
			nt.Note(fmt.Sprintf("partner: none answered on %s: started one in this process (`make partner` runs it on its own)", *addr))
		}
		o.Partner, o.PartnerAddr = p, strings.TrimPrefix(p.Base, "http://") // the one that answers: with -partner 127.0.0.1:0, a free port
		o.Progress = nt.Progress
		rs, err := backpressure.Run(ctx, cfg, o)
		if err != nil {
			return err
		}
		nt.Done()
		backpressure.Print(os.Stdout, o, rs)
		return nil
	})
}

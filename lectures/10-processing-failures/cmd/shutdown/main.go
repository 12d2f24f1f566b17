// Command shutdown (`make shutdown`) stops courier-service in the middle of a
// batch twice, with SIGTERM (a graceful stop: stop polling, book what is
// queued, commit, leave the group) and with SIGKILL (no code runs), starts
// the next instance each time and prints what it re-read and what the
// partner booked twice. `shutdown courier ...` is one courier process.
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
	"github.com/brew-course/kafka/lectures/10-processing-failures/shutdown"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "courier" {
		backpressure.Child("shutdown", os.Args[2:])
		return
	}
	o := shutdown.Defaults
	addr := flag.String("partner", partner.DefaultAddr, "the partner API (started in this process when none answers)")
	flag.StringVar(&o.Topic, "topic", o.Topic, "the orders topic")
	flag.IntVar(&o.Orders, "orders", o.Orders, "orders to write for each signal")
	flag.DurationVar(&o.Latency, "latency", o.Latency, "the partner's time per booking")
	flag.IntVar(&o.Workers, "workers", o.Workers, "workers booking at the partner")
	flag.IntVar(&o.Queue, "queue", o.Queue, "the courier's queue")
	flag.IntVar(&o.StopAfter, "stop-after", o.StopAfter, "send the signal once this many orders are booked")
	flag.DurationVar(&o.CommitEvery, "commit-every", o.CommitEvery, "how often the courier commits what is booked")
	flag.DurationVar(&o.SessionTimeout, "session-timeout", o.SessionTimeout, "the group session timeout (the broker takes 6s to 30m by default)")
	flag.DurationVar(&o.Drain, "drain", o.Drain, "the graceful stop's bound on booking what is queued")
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("topic", o.Topic)
	fc.Require(o.Orders >= 2 && o.Orders <= 100_000, "orders", o.Orders, "must be 2 to 100000")
	fc.Require(o.Latency >= 0 && o.Latency <= time.Second, "latency", o.Latency, "must be 0 to 1s")
	fc.Require(o.Workers >= 1 && o.Workers <= 256, "workers", o.Workers, "must be 1 to 256")
	fc.Require(o.Queue >= 4 && o.Queue <= 100_000, "queue", o.Queue, "must be 4 to 100000")
	fc.Require(o.StopAfter >= 1 && o.StopAfter < o.Orders, "stop-after", o.StopAfter, "must be 1 to -orders minus 1")
	fc.Require(o.CommitEvery >= 10*time.Millisecond && o.CommitEvery <= time.Minute, "commit-every", o.CommitEvery, "must be 10ms to 1m")
	fc.Require(o.SessionTimeout >= time.Second && o.SessionTimeout <= 5*time.Minute, "session-timeout", o.SessionTimeout, "must be 1s to 5m")
	fc.Require(o.Drain >= 0 && o.Drain <= 5*time.Minute, "drain", o.Drain, "must be 0 to 5m")
	fc.NoArgs()
	fc.ExitOnUsageError("shutdown")
	o.Run = fmt.Sprintf("shutdown-%d", time.Now().UnixMilli())
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "shutdown:", err)
		os.Exit(1)
	}
	o.Courier = []string{self, "courier"}

	brewkit.Main("shutdown", func(ctx context.Context, cfg brewkit.Config) error {
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
		rows, err := shutdown.Run(ctx, cfg, o)
		if err != nil {
			return err
		}
		nt.Done()
		shutdown.Print(os.Stdout, o, rows)
		return nil
	})
}

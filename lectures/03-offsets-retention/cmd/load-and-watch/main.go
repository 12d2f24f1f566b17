// Command load-and-watch writes a steady stream of Brew orders while a
// consumer group reads and commits them, and shows live per partition the log
// start, the log end (high watermark), the committed offset and the lag.
// Stop it with Ctrl-C and start it again: the group resumes where it committed.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/03-offsets-retention/loadandwatch"
	"github.com/brew-course/kafka/lectures/03-offsets-retention/offsets"
)

func main() {
	c := loadandwatch.Defaults
	flag.StringVar(&c.Topic, "topic", c.Topic, "topic to write and read")
	flag.StringVar(&c.Group, "group", c.Group, "consumer group")
	flag.IntVar(&c.Rate, "rate", c.Rate, "orders written per second (0: only read)")
	flag.DurationVar(&c.Work, "work", c.Work, "the consumer's time per order")
	flag.DurationVar(&c.Duration, "duration", 0, "stop after this long (0: at Ctrl-C)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: load-and-watch [-topic T] [-group G] [-rate 30] [-work 20ms] [-duration 0]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("topic", c.Topic)
	fc.Name("group", c.Group)
	fc.Require(c.Rate >= 0, "rate", c.Rate, "must not be negative (0: only read)")
	fc.Require(c.Work >= 0, "work", c.Work, "must not be negative")
	fc.Require(c.Duration >= 0, "duration", c.Duration, "must not be negative (0: until Ctrl-C)")
	fc.NoArgs()
	fc.ExitOnUsageError("load-and-watch")
	brewkit.Main("load-and-watch", func(ctx context.Context, cfg brewkit.Config) error {
		return run(ctx, cfg, c)
	})
}

func run(ctx context.Context, cfg brewkit.Config, c loadandwatch.Config) error {
	live := brewkit.NewLive(os.Stdout)
	tty := brewkit.IsTerminal(os.Stdout)
	var intro string
	say := func(s string) {
		intro = s
		fmt.Println(s)
	}
	start := time.Now()
	look := func(ps []offsets.Partition) {
		var b bytes.Buffer
		if tty {
			fmt.Fprintf(&b, "%s\n\n", intro)
		}
		fmt.Fprintf(&b, "%s  group %s  %s  %s\n", c.Topic, c.Group, time.Since(start).Round(time.Second), offsets.LagLine(ps))
		if tty {
			fmt.Fprintln(&b, "(Ctrl-C stops; run again to resume from the committed offsets)")
		}
		fmt.Fprintln(&b)
		offsets.Print(&b, ps)
		live.Frame(b.String())
	}
	sum, err := loadandwatch.Run(ctx, cfg, c, say, look)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	fmt.Printf("\nstopped: wrote %d, processed %d; committed offsets saved for group %s:\n\n", sum.Produced, sum.Consumed, c.Group)
	offsets.Print(os.Stdout, sum.Final)
	fmt.Println("\nrun again to resume from them")
	return nil
}

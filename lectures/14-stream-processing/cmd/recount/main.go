// Command recount counts the windows of the orders' topic in one batch,
// straight from the topic, and compares them with the analytics service's
// state, its changelog: the oracle the lecture's tests use.
package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/analytics"
	"github.com/brew-course/kafka/lectures/14-stream-processing/recount"
	"github.com/brew-course/kafka/lectures/14-stream-processing/store"
	"github.com/brew-course/kafka/lectures/14-stream-processing/window"
)

func main() {
	c := analytics.Defaults
	flag.StringVar(&c.In, "in", c.In, "the orders' topic")
	flag.StringVar(&c.Changelog, "changelog", c.Changelog, "the service's changelog")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: recount [-in %s] [-changelog %s]\n\n", c.In, c.Changelog)
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Topic("in", c.In)
	fc.Topic("changelog", c.Changelog)
	fc.NoArgs()
	fc.ExitOnUsageError("recount")
	brewkit.Main("recount", func(ctx context.Context, cfg brewkit.Config) error {
		cl, adm, err := brewkit.Connect(ctx, cfg)
		if err != nil {
			return err
		}
		defer cl.Close()
		want, err := recount.Run(ctx, cfg, adm, c.In, c.Window)
		if err != nil {
			return err
		}
		fmt.Printf("recount of %s: %d orders in %s: %d windows, %d out of order, %d too late\n",
			c.In, want.Counts.Records, want.Took.Round(time.Millisecond), len(want.Totals), want.Counts.OutOfOrder, want.Counts.TooLate)
		got, parts, err := store.Materialized(ctx, cfg, adm, c.Changelog)
		if err != nil {
			return err
		}
		judged := 0
		for _, p := range parts {
			judged += p.Counts.Records
		}
		differ, extra := window.Diff(want.Totals, got)
		fmt.Printf("the service's changelog %s: %d windows, %d orders judged\n", c.Changelog, len(got), judged)
		if len(differ) == 0 && judged == want.Counts.Records {
			fmt.Println("EXACT: every window equals the recount")
			return nil
		}
		fmt.Printf("DIFFERENT: %d windows differ (%+d cents), %d orders judged of %d (the service may not have read them all yet)\n", len(differ), extra, judged, want.Counts.Records)
		for i, k := range store.SortedKeys(diffKeys(differ)) {
			if i == 5 {
				break
			}
			fmt.Printf("  %s: recount %+v, service %+v\n", k, want.Totals[k], got[k])
		}
		return nil
	})
}

func diffKeys(ks []window.Key) window.Totals {
	t := window.Totals{}
	for _, k := range ks {
		t[k] = window.Revenue{}
	}
	return t
}

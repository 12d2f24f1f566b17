// Command commit-styles kills a consumer with SIGKILL in the middle of a
// batch, once per way of committing offsets (franz-go's autocommit, greedy
// autocommit, after each record, after each batch, asynchronously), starts it
// again and prints what the restarted consumer read twice or never read.
// `commit-styles consumer ...` is one consumer process.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/commitstyles"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "consumer" {
		runConsumer(os.Args[2:])
		return
	}
	c := commitstyles.Defaults
	only := flag.String("style", "", "one style only: auto, greedy, record, batch or async")
	flag.IntVar(&c.Records, "records", c.Records, "orders on each style's topic")
	flag.IntVar(&c.CrashAfter, "crash-after", c.CrashAfter, "the consumer is killed after processing this many")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: commit-styles [-style S] [-records 60] [-crash-after 35] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	styles := commitstyles.Styles
	if *only != "" {
		s, err := commitstyles.ParseStyle(*only)
		fc.Require(err == nil, "style", *only, "use auto, greedy, record, batch or async")
		styles = []commitstyles.Style{s}
	}
	fc.Require(c.Records >= 2, "records", c.Records, "must be at least 2")
	fc.Require(c.CrashAfter >= 1 && c.CrashAfter < c.Records, "crash-after", c.CrashAfter, "must be between 1 and -records minus 1")
	fc.NoArgs()
	fc.ExitOnUsageError("commit-styles")
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "commit-styles:", err)
		os.Exit(1)
	}
	c.Consumer = []string{self, "consumer"}
	brewkit.Main("commit-styles", func(ctx context.Context, cfg brewkit.Config) error {
		rows, err := commitstyles.Run(ctx, cfg, c, styles, func(s string) { fmt.Fprintln(os.Stderr, s) })
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(rows)
		}
		commitstyles.Print(os.Stdout, rows)
		return nil
	})
}

// runConsumer is one consumer process: what it does as JSON lines on stdout.
func runConsumer(args []string) {
	fs := flag.NewFlagSet("consumer", flag.ExitOnError)
	var c commitstyles.Consumer
	fs.StringVar(&c.Group, "group", "", "group")
	fs.StringVar(&c.Topic, "topic", "", "topic")
	style := fs.String("style", string(commitstyles.Auto), "commit style")
	fs.IntVar(&c.CrashAfter, "crash-after", 0, "SIGKILL itself after this many records")
	fs.Int64Var(&c.Until, "until", 0, "stop after the record before this offset")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	var fc brewkit.FlagCheck
	s, err := commitstyles.ParseStyle(*style)
	fc.Name("group", c.Group)
	fc.Topic("topic", c.Topic)
	fc.Require(err == nil, "style", *style, "use auto, greedy, record, batch or async")
	fc.Require(c.CrashAfter >= 0, "crash-after", c.CrashAfter, "must not be negative")
	fc.Require(c.Until >= 0, "until", c.Until, "must not be negative")
	fc.ExitOnUsageError("consumer")
	c.Style = s
	brewkit.Main("consumer", func(ctx context.Context, cfg brewkit.Config) error {
		var mu sync.Mutex
		enc := json.NewEncoder(os.Stdout)
		return c.Run(ctx, cfg, func(st commitstyles.Step) {
			mu.Lock()
			defer mu.Unlock()
			enc.Encode(st) //nolint:errcheck // the parent reads it
		})
	})
}

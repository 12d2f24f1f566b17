package analytics

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Main is the service as a program (cmd/analytics, and the crash drills'
// child process): flags, then Run until Ctrl-C or -idle. Progress goes to
// stdout, one line per restore and a summary; stderr is for the one line
// that says why it failed.
func Main(name string, args []string) {
	c, asJSON := parseFlags(name, args)
	brewkit.Main(name, func(ctx context.Context, cfg brewkit.Config) error {
		return serve(ctx, cfg, c, asJSON)
	})
}

// parseFlags is the service's Config from its command line; a bad flag
// exits with the usage error.
func parseFlags(name string, args []string) (c Config, asJSON bool) {
	c = Defaults
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	fs.StringVar(&c.In, "in", c.In, "the orders' topic")
	fs.StringVar(&c.Changelog, "changelog", c.Changelog, "the windows' changelog topic (created: compacted, as many partitions as -in)")
	fs.StringVar(&c.Out, "out", c.Out, "the live revenue's topic (created: as many partitions as -in)")
	fs.StringVar(&c.Group, "group", c.Group, "the consumer group (the application id)")
	fs.StringVar(&c.ID, "id", c.ID, "this instance's name: its group instance id and transactional id are GROUP.ID")
	fs.StringVar(&c.Dir, "dir", c.Dir, "the local store's folder (\"\": a temporary one, deleted at the end: every start restores from the changelog)")
	noEOS := fs.Bool("no-eos", false, "no transactions: write the changelog and the revenue, then commit the offsets")
	fs.IntVar(&c.Batch, "batch", c.Batch, "orders per batch, at most")
	fs.DurationVar(&c.Idle, "idle", c.Idle, "stop after this long without orders (0: run until Ctrl-C)")
	fs.BoolVar(&c.Warm, "warm", false, "a standby: restore every changelog partition before joining the group")
	fs.IntVar(&c.CrashAfter, "crash-after", 0, "kill itself (SIGKILL) in the batch that reaches this many orders")
	stage := fs.String("crash-at", "", "where in that batch: counting, written or committed")
	fs.BoolVar(&asJSON, "json", false, "print the run's stats as JSON")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: %s [flags]

Brew's analytics service: revenue per shop per minute from the orders, by
event time, late orders taken for %s after a minute ends. The windows live
in a local store (-dir) and in the changelog topic; a partition's state is
restored from the changelog when the instance gets it.

`, name, Defaults.Window.Grace)
		fs.PrintDefaults()
	}
	fs.Parse(args) //nolint:errcheck // ExitOnError
	var fc brewkit.FlagCheck
	fc.Topic("in", c.In)
	fc.Topic("changelog", c.Changelog)
	fc.Topic("out", c.Out)
	fc.Name("group", c.Group)
	fc.Name("id", c.ID)
	fc.Require(c.Batch >= 1, "batch", c.Batch, "must be at least 1")
	fc.Require(c.Idle >= 0, "idle", c.Idle, "must not be negative")
	fc.Require(c.CrashAfter >= 0, "crash-after", c.CrashAfter, "must not be negative")
	if *stage != "" {
		st, err := ParseStage(*stage)
		fc.Require(err == nil, "crash-at", *stage, "use counting, written or committed")
		c.CrashAt = st
	}
	fc.Require(c.CrashAt == "" || c.CrashAfter > 0, "crash-after", c.CrashAfter, "-crash-at needs -crash-after")
	if fs.NArg() > 0 {
		fc.Problem("unexpected arguments: %v", fs.Args())
	}
	fc.ExitOnUsageError(name)
	c.EOS = !*noEOS
	return c, asJSON
}

// serve is Main's run: the topics made sure of, a local store (a temporary
// one without -dir), Run until ctx ends or -idle, and its stats: the
// summary line, or with -json the stats as JSON.
func serve(ctx context.Context, cfg brewkit.Config, c Config, asJSON bool) error {
	var progress io.Writer = os.Stdout
	if asJSON {
		progress = io.Discard
	}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return err
	}
	err = Topics(ctx, adm, c)
	cl.Close()
	if err != nil {
		return err
	}
	if c.Dir == "" {
		tmp, err := os.MkdirTemp("", "brew-analytics-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		c.Dir = tmp
	}
	st, err := Run(ctx, cfg, c, func(s string) { fmt.Fprintln(progress, s) })
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(st)
	}
	fmt.Fprintln(progress, st.Summary())
	return nil
}

// Summary is the line a run ends with.
func (s Stats) Summary() string {
	n, took := s.Restored()
	return fmt.Sprintf("analytics %s: %d orders in %d batches (%d aborted and read again), partitions %v; %d too late, dropped; restored %d changelog records in %s",
		s.ID, s.Orders, s.Batches, s.Aborted, s.Partitions, s.Counts.TooLate, n, took.Round(1e6))
}

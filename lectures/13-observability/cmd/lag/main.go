// Command lag (`make lag`) shows how far behind each consumer group and
// share group is, per partition, in records (LAG) and in time (TIME-LAG: how
// long ago the oldest record the group has not processed was written).
// -watch redraws it every second; -listen serves it to Prometheus as
// brew_group_lag_records, brew_group_lag_seconds and brew_group_members,
// measured at each scrape.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/brew-course/kafka/lectures/13-observability/lag"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// groups is -group, which may repeat.
type groups []string

func (g *groups) String() string     { return strings.Join(*g, " ") }
func (g *groups) Set(v string) error { *g = append(*g, v); return nil }

// usage is the help's text; %s is the course's metrics address.
const usage = `usage: lag [flags]

For each consumer group (classic or KIP-848) and share group, per partition:
COMMITTED (a share group's start offset), END (the high watermark), LAG =
END - COMMITTED (a share group's: as the broker reports it) and TIME-LAG, how
long ago the oldest unprocessed record (the one at COMMITTED) was written,
by its timestamp. Then one line per group: state, members, total lag, the
oldest unprocessed record's age.

-group NAME measures that group; -group PREFIX* every group whose name starts
with PREFIX (quote it for the shell: -group 'brew.kitchen.*'); it may repeat.
Without -group, every consumer and share group of the cluster.

-listen ADDR serves the same, measured at each scrape, on http://ADDR/metrics
for Prometheus (%s is the course's: Prometheus scrapes it):
brew_group_lag_records, brew_group_lag_seconds {group, topic, partition,
kind} and brew_group_members {group, kind}, kind consumer or share;
brew_lag_scrape_errors_total counts the scrapes that failed.

`

func main() {
	var o lag.Options
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), usage, lag.MetricsAddr)
		flag.PrintDefaults()
	}
	var gs groups
	flag.Var(&gs, "group", "a group, or a prefix ending in * (may repeat; default: every group)")
	watch := flag.Bool("watch", false, "measure again every -interval and redraw, until Ctrl-C")
	interval := flag.Duration("interval", time.Second, "with -watch: how often to measure")
	listen := flag.String("listen", "", "serve /metrics for Prometheus on this address (for example "+lag.MetricsAddr+") instead of printing")
	flag.DurationVar(&o.Timeout, "timeout", lag.DefaultTimeout, "bound on one measurement; a group not described within it is reported as not measured")
	flag.Parse()
	var fc brewkit.FlagCheck
	for _, g := range gs {
		fc.Require(strings.TrimSuffix(g, "*") != "" && !strings.Contains(strings.TrimSuffix(g, "*"), "*"), "group", g,
			"want a group name, or a prefix followed by one * at the end (brew.kitchen.*)")
	}
	fc.Require(*interval >= 100*time.Millisecond && *interval <= time.Hour, "interval", *interval, "must be 100ms to 1h")
	fc.Require(o.Timeout >= 500*time.Millisecond && o.Timeout <= 5*time.Minute, "timeout", o.Timeout, "must be 500ms to 5m")
	fc.Require(!*watch || *listen == "", "listen", *listen, "serves metrics: it does not go with -watch")
	fc.NoArgs()
	fc.ExitOnUsageError("lag")
	o.Groups = gs

	brewkit.Main("lag", func(ctx context.Context, cfg brewkit.Config) error {
		// One line within brewkit.DialTimeout when no cluster answers;
		// each measurement then makes its own clients.
		cl, _, err := brewkit.Connect(ctx, cfg)
		if err != nil {
			return err
		}
		cl.Close()
		switch {
		case *listen != "":
			c := lag.NewCollector(ctx, cfg, o)
			c.OnError = func(err error) { fmt.Fprintln(os.Stderr, "lag: scrape:", err) }
			addr, err := lag.Serve(ctx, *listen, c)
			if err != nil {
				return err
			}
			fmt.Printf("serving consumer lag on http://%s/metrics, measured at each scrape (Ctrl-C stops)\n", addr)
			<-ctx.Done()
			return ctx.Err()
		case *watch:
			return watchLag(ctx, cfg, o, *interval)
		}
		r, err := lag.Measure(ctx, cfg, o)
		if err != nil {
			return err
		}
		lag.Print(os.Stdout, r)
		if n := r.Failed(); n > 0 {
			// The first group's error on the line, wrapped: an
			// authorization failure gets its remedy from brewkit.Main.
			for _, g := range r.Groups {
				if g.Err != nil {
					return fmt.Errorf("%d of %d groups not measured (above); %s: %w", n, len(r.Groups), g.Name, g.Err)
				}
			}
		}
		return nil
	})
}

// watchLag measures every interval and redraws; a failed measurement shows
// its error in the frame and the next one tries again.
func watchLag(ctx context.Context, cfg brewkit.Config, o lag.Options, interval time.Duration) error {
	live := brewkit.NewLive(os.Stdout)
	for {
		start := time.Now()
		r, err := lag.Measure(ctx, cfg, o)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var b strings.Builder
		fmt.Fprintf(&b, "consumer lag, measured every %s (Ctrl-C stops)\n\n", interval)
		if err != nil {
			fmt.Fprintf(&b, "not measured: %v\n", err)
		} else {
			lag.Print(&b, r)
		}
		live.Frame(b.String())
		if err := brewkit.Sleep(ctx, interval-time.Since(start)); err != nil {
			return err
		}
	}
}

// Command quorum-status shows who is who in the course cluster: the cluster
// id, the brokers, the controller id from metadata (a proxy in KRaft) and the
// real Raft leader and voters from DescribeQuorum.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/01-architecture-kraft/quorumstatus"
)

func main() {
	watch := flag.Bool("watch", false, "redraw every -interval and mark when the Raft leader changes")
	asJSON := flag.Bool("json", false, "print JSON (one object per look with -watch)")
	interval := flag.Duration("interval", time.Second, "time between looks with -watch")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: quorum-status [-watch] [-json] [-interval 1s]

Prints the cluster id, the brokers, BrokerMetadata's controller (a proxy in
KRaft) and DescribeQuorum's Raft leader and voters. The cluster is
%s, or %s when set.

`, brewkit.DefaultBootstrap, brewkit.EnvBootstrap)
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(*interval > 0, "interval", *interval, "must be > 0")
	fc.NoArgs()
	fc.ExitOnUsageError("quorum-status")

	brewkit.Main("quorum-status", func(ctx context.Context, cfg brewkit.Config) error {
		return run(ctx, cfg, *watch, *asJSON, *interval)
	})
}

func run(ctx context.Context, cfg brewkit.Config, watch, asJSON bool, interval time.Duration) error {
	cl, _, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer cl.Close()

	look := func() (quorumstatus.Status, error) {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return quorumstatus.Describe(lctx, cl)
	}
	if !watch {
		st, err := look()
		if err != nil {
			return err
		}
		if asJSON {
			return json.NewEncoder(os.Stdout).Encode(st)
		}
		st.Print(os.Stdout)
		return nil
	}

	var w quorumstatus.Watch
	live := brewkit.NewLive(os.Stdout)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		st, err := look()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		now := time.Now()
		ev := w.Observe(st, err, now)
		switch {
		case asJSON && err == nil:
			json.NewEncoder(os.Stdout).Encode(st) //nolint:errcheck // stdout
		case asJSON:
		case brewkit.IsTerminal(os.Stdout):
			live.Frame(w.Frame(st, err, now))
		default:
			if ev != "" {
				fmt.Println(ev)
			}
			live.Frame(w.Line(st, err))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

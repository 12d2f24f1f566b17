// Command acks writes the same workload with acks=0, acks=1 and acks=all and
// prints what each costs; with -refuse it shows min.insync.replicas=3 refusing
// acks=all while a node is down, and acks=1 still writing.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"

	"github.com/brew-course/kafka/lectures/05-acks-durability/acks"
)

func main() {
	c := acks.Defaults
	flag.IntVar(&c.Records, "records", c.Records, "records per acks level")
	flag.IntVar(&c.Size, "size", c.Size, "value bytes per record")
	parts := flag.Int("partitions", int(c.Partitions), "partitions of the topic each level writes to")
	refuse := flag.Bool("refuse", false, "instead: min.insync.replicas=3 with one node stopped (stops and starts a node of the stand)")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: acks [-records 20000] [-size 512] [-partitions 6] [-json]\n       acks -refuse\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	c.Partitions = int32(*parts)
	var fc brewkit.FlagCheck
	fc.Require(c.Records >= 1, "records", c.Records, "must be at least 1")
	fc.Require(c.Size >= 1, "size", c.Size, "must be at least 1")
	fc.Require(c.Partitions >= 1, "partitions", c.Partitions, "must be at least 1")
	fc.NoArgs()
	fc.ExitOnUsageError("acks")

	brewkit.Main("acks", func(ctx context.Context, cfg brewkit.Config) error {
		say := func(s string) { fmt.Fprintln(os.Stderr, s) }
		if *refuse {
			return brewkit.LeftBehind(runRefuse(ctx, cfg, *asJSON), "a stopped node stays stopped: start it with `make restore`")
		}
		ms, err := acks.Bench(ctx, cfg, c, say)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(ms)
		}
		acks.PrintBench(os.Stdout, ms)
		if simulated(ctx, cfg) {
			fmt.Println("\n(embedded simulation: no replication and no disk, so these figures say nothing about Kafka: make up STAND=native)")
		}
		return nil
	})
}

func runRefuse(ctx context.Context, cfg brewkit.Config, asJSON bool) error {
	s, err := stand.FindRunning("-refuse stops and starts a node")
	if err != nil {
		return err
	}
	r, err := acks.Refuse(ctx, cfg, s, func(line string) {
		if !asJSON {
			fmt.Println(line)
		}
	})
	if err != nil || !asJSON {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// simulated reports whether cfg is the embedded stand; on a failed question, no.
func simulated(ctx context.Context, cfg brewkit.Config) bool {
	cl, err := brewkit.NewClient(cfg)
	if err != nil {
		return false
	}
	defer cl.Close()
	sim, err := brewkit.IsSimulated(ctx, cl)
	return err == nil && sim
}

// Command failover is the instructor's failover drill: keyed orders keep
// flowing with acks=all while the leader of a partition is stopped (and, with
// -second, one more node), then everything is started again and the program
// counts what was acknowledged, read, lost and duplicated.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"

	"github.com/brew-course/kafka/lectures/04-replication-isr/failover"
)

func main() {
	c := failover.Defaults
	flag.StringVar(&c.Topic, "topic", c.Topic, "topic to drill (created if missing)")
	p := flag.Int("partition", int(c.Partition), "partition whose leader is stopped")
	flag.IntVar(&c.Rate, "rate", c.Rate, "orders per second")
	flag.DurationVar(&c.Steady, "steady", c.Steady, "how long to produce before the stop and after the restart")
	flag.BoolVar(&c.Second, "second", false, "also stop a second node: acks=all fails with NOT_ENOUGH_REPLICAS, acks=1 still writes")
	flag.BoolVar(&c.Kill, "kill", false, "stop nodes with SIGKILL (a crash) instead of SIGTERM")
	asJSON := flag.Bool("json", false, "print the report as JSON")
	save := flag.String("save", "", "also write the report as JSON to this file, for the timeline picture (cmd/timeline draws it)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: failover [-second] [-kill] [-topic T] [-partition P] [-rate N] [-steady D] [-json] [-save FILE]\n\n"+
			"Stops and starts nodes of the stand that is up in this checkout (make up).\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	c.Partition = int32(*p)
	var fc brewkit.FlagCheck
	fc.Topic("topic", c.Topic)
	fc.Require(c.Rate > 0, "rate", c.Rate, "must be > 0")
	fc.Require(c.Steady > 0, "steady", c.Steady, "must be > 0")
	fc.Require(c.Partition >= 0, "partition", c.Partition, "must not be negative")
	fc.NoArgs()
	fc.ExitOnUsageError("failover")

	brewkit.Main("failover", func(ctx context.Context, cfg brewkit.Config) error {
		// Not a quiet stop: the drill may have left nodes stopped.
		return brewkit.LeftBehind(run(ctx, cfg, c, *asJSON, *save), "nodes the drill stopped stay stopped: start them with `make restore`")
	})
}

func run(ctx context.Context, cfg brewkit.Config, c failover.Config, asJSON bool, save string) error {
	s, err := stand.FindRunning("the drill stops and starts nodes")
	if err != nil {
		return err
	}
	say := func(line string) { fmt.Fprintln(os.Stderr, line) }
	rep, err := failover.Run(ctx, c, cfg, s, say)
	if err != nil {
		return err
	}
	if save != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(save, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("saving the report: %w", err)
		}
		say("report saved to " + save)
	}
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(rep)
	}
	fmt.Println()
	rep.Print(os.Stdout)
	return nil
}

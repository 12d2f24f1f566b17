// Command idempotence provokes retries of batches the broker already wrote
// (a follower paused, so acks=all requests time out after the leader wrote
// them), once without idempotence and once with it, and counts the copies
// read back.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"

	"github.com/brew-course/kafka/lectures/05-acks-durability/idempotence"
)

func main() {
	c := idempotence.Defaults
	flag.IntVar(&c.Records, "records", c.Records, "orders written while the follower is paused")
	flag.DurationVar(&c.Pause, "pause", c.Pause, "how long the follower stays paused (keep it under broker.session.timeout.ms, 9s)")
	flag.DurationVar(&c.RequestTimeout, "request-timeout", c.RequestTimeout, "how long the leader may wait for the in-sync replicas")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: idempotence [-records 100] [-pause 4s] [-request-timeout 1s] [-json]\n\n"+
			"Pauses and resumes a node of the stand that is up in this checkout (make up).\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(c.Records >= 1, "records", c.Records, "must be at least 1")
	fc.Require(c.Pause > c.RequestTimeout, "pause", c.Pause, "must be longer than -request-timeout, or nothing times out")
	fc.Require(c.RequestTimeout > 0, "request-timeout", c.RequestTimeout, "must be > 0")
	fc.NoArgs()
	fc.ExitOnUsageError("idempotence")

	brewkit.Main("idempotence", func(ctx context.Context, cfg brewkit.Config) error {
		s, err := stand.FindRunning("the demo pauses a node")
		if err != nil {
			return err
		}
		res, err := idempotence.Run(ctx, cfg, s, c, func(line string) { fmt.Fprintln(os.Stderr, line) })
		if err != nil {
			return brewkit.LeftBehind(err, "if a node is still paused, `make restore` resumes it")
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(res)
		}
		res.Print(os.Stdout)
		if res.Simulated {
			fmt.Printf("\n(%s)\n", "embedded simulation: the paused follower is simulated: the leader writes and answers REQUEST_TIMED_OUT")
		}
		return nil
	})
}

// Command rolling-upgrade rolls a lab cluster of three nodes from Kafka 4.3.1
// to the course's release one node at a time while a witness writes and
// reads orders, finalizes metadata.version with UpdateFeatures, and shows
// that the cluster then refuses to go back. The course stand is left alone.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"

	"github.com/brew-course/kafka/lectures/15-operations/rollingupgrade"
)

func main() {
	rate := flag.Int("rate", 100, "the witness' orders per second")
	asJSON := flag.Bool("json", false, "print the result as JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: rolling-upgrade [-rate 100] [-json]

Starts a lab cluster of its own beside the stand (nodes 1-3 on
127.0.0.1:19301-19303, controllers on 19311-19313, data in a temporary
folder) on Kafka %s, rolls it to %s one node at a time under a witness,
finalizes metadata.version with UpdateFeatures and asks, validate only, to
go back. Java runs the nodes; Maven fetches the %s jars once. About two
minutes.

`, rollingupgrade.From, rollingupgrade.To, rollingupgrade.From)
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(*rate >= 1 && *rate <= 2000, "rate", *rate, "give 1 to 2000 orders a second")
	fc.NoArgs()
	fc.ExitOnUsageError("rolling-upgrade")

	brewkit.Main("rolling-upgrade", func(ctx context.Context, _ brewkit.Config) error {
		s, err := stand.Find()
		if err != nil {
			return err
		}
		say := func(line string) { fmt.Println(line) }
		if *asJSON {
			say = func(string) {}
		}
		res, err := rollingupgrade.Run(ctx, s, *rate, say)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(res)
		}
		fmt.Println()
		res.Print(os.Stdout)
		return nil
	})
}

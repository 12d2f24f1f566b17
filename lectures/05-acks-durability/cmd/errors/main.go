// Command errors triggers, for real, the errors a producer meets and prints
// how franz-go reports each and what to do, then reads back an order's headers.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"

	"github.com/brew-course/kafka/lectures/05-acks-durability/failures"
)

func main() {
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: errors [-json]\n\n"+
			"Stops and pauses nodes of the stand that is up in this checkout (make up), and brings them back.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.NoArgs()
	fc.ExitOnUsageError("errors")

	brewkit.Main("errors", func(ctx context.Context, cfg brewkit.Config) error {
		s, err := stand.FindRunning("it stops and pauses nodes")
		if err != nil {
			return err
		}
		res, err := failures.Run(ctx, cfg, s, func(line string) { fmt.Fprintln(os.Stderr, line) })
		if err != nil {
			return brewkit.LeftBehind(err, "a stopped or paused node may stay so: `make restore` brings it back")
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(res)
		}
		res.Print(os.Stdout)
		return nil
	})
}

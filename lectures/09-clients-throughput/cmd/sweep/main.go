// Command sweep runs the franz-go benchmark across linger and batch size and
// across compression codecs, and prints the two tables.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/09-clients-throughput/sweep"
)

func main() {
	c := sweep.Defaults
	flag.IntVar(&c.Base.Records, "records", c.Base.Records, "records per run")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: sweep [-records 100000] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(c.Base.Records >= 100, "records", c.Base.Records, "must be at least 100")
	fc.NoArgs()
	fc.ExitOnUsageError("sweep")
	brewkit.Main("sweep", func(ctx context.Context, cfg brewkit.Config) error {
		r, err := sweep.Run(ctx, cfg, c, func(s string) { fmt.Fprintln(os.Stderr, s) })
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(r)
		}
		r.Print(os.Stdout)
		return nil
	})
}

// Command compaction writes a menu of prices keyed by product, with several
// versions per product and a tombstone, and shows the log before and after
// Kafka's log cleaner compacts it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/03-offsets-retention/compaction"
)

func main() {
	limit := flag.Duration("limit", 2*time.Minute, "give up waiting for the cleaner after this long")
	asJSON := flag.Bool("json", false, "print the result as JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: compaction [-limit 2m] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(*limit > 0, "limit", *limit, "must be > 0")
	fc.NoArgs()
	fc.ExitOnUsageError("compaction")
	brewkit.Main("compaction", func(ctx context.Context, cfg brewkit.Config) error {
		say := func(s string) { fmt.Fprintln(os.Stderr, s) }
		res, err := compaction.Run(ctx, cfg, *limit, say)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(res)
		}
		res.Print(os.Stdout)
		return nil
	})
}

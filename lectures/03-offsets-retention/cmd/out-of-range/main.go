// Command out-of-range shows auto.offset.reset at work on a committed offset
// that no longer exists: two groups commit offset 30, DeleteRecords moves the
// log start to 60, and their consumers start again, one with earliest and
// one with latest.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/03-offsets-retention/outofrange"
)

func main() {
	asJSON := flag.Bool("json", false, "print the result as JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: out-of-range [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.NoArgs()
	fc.ExitOnUsageError("out-of-range")
	brewkit.Main("out-of-range", func(ctx context.Context, cfg brewkit.Config) error {
		say := func(s string) {
			if !*asJSON {
				fmt.Println(s)
			}
		}
		res, err := outofrange.Run(ctx, cfg, say)
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

// Command delivery writes a few orders and prints, for each, its delivery
// report: the partition and offset the broker acknowledged, or the error.
// Produce returns before any acknowledgement; Flush waits for all of them.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/05-acks-durability/delivery"
)

func main() {
	n := flag.Int("n", 5, "orders to write (the 3rd is too large for the topic)")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: delivery [-n 5] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(*n >= 3, "n", *n, "must be at least 3 (the 3rd order is the one too large)")
	fc.NoArgs()
	fc.ExitOnUsageError("delivery")
	brewkit.Main("delivery", func(ctx context.Context, cfg brewkit.Config) error {
		res, err := delivery.Run(ctx, cfg, *n)
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

// Command grow adds partitions to a fresh topic (3 -> 6), shows which keys now
// land elsewhere, then asks for 2 partitions and prints Kafka's refusal.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/02-topics-partitions/grow"
)

func main() {
	c := grow.Defaults
	from := flag.Int("from", int(c.From), "partitions at creation")
	to := flag.Int("to", int(c.To), "partitions after growing")
	shrink := flag.Int("shrink-to", int(c.ShrinkTo), "partitions asked for at the end (fewer: refused)")
	flag.IntVar(&c.Keys, "keys", c.Keys, "sample order ids")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: grow [-from 3] [-to 6] [-shrink-to 2] [-keys 12] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	c.From, c.To, c.ShrinkTo = int32(*from), int32(*to), int32(*shrink)
	var fc brewkit.FlagCheck
	fc.Require(c.From >= 1, "from", c.From, "must be at least 1")
	fc.Require(c.To > c.From, "to", c.To, fmt.Sprintf("must be more than -from %d: Kafka only adds partitions", c.From))
	fc.Require(c.ShrinkTo >= 1 && c.ShrinkTo < c.To, "shrink-to", c.ShrinkTo, fmt.Sprintf("must be between 1 and -to %d, to show the refusal", c.To))
	fc.Require(c.Keys >= 1, "keys", c.Keys, "must be at least 1")
	fc.NoArgs()
	fc.ExitOnUsageError("grow")
	brewkit.Main("grow", func(ctx context.Context, cfg brewkit.Config) error {
		res, err := grow.Run(ctx, cfg, c)
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

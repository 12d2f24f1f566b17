// Command keyed-producer writes Brew orders keyed by order id (or by shop,
// or with no key) and shows, from the records read back, which partition the
// broker stored them in.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/02-topics-partitions/keyedproducer"
)

func main() {
	c := keyedproducer.Config{}
	flag.StringVar(&c.Topic, "topic", brewkit.Orders.Name, "topic to write to")
	flag.IntVar(&c.Count, "n", 1000, "orders to write")
	mode := flag.String("key", "order", "key by: order, shop or none")
	flag.IntVar(&c.Samples, "samples", 5, "keys whose placement to show")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: keyed-producer [-key order|shop|none] [-n 1000] [-topic T] [-samples 5] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	var err error
	c.Mode, err = keyedproducer.ParseMode(*mode)
	fc.Require(err == nil, "key", *mode, "use order, shop or none")
	fc.Topic("topic", c.Topic)
	fc.Require(c.Count >= 1, "n", c.Count, "must be at least 1")
	fc.Require(c.Samples >= 0, "samples", c.Samples, "must not be negative")
	fc.NoArgs()
	fc.ExitOnUsageError("keyed-producer")
	brewkit.Main("keyed-producer", func(ctx context.Context, cfg brewkit.Config) error {
		res, err := keyedproducer.Run(ctx, cfg, c)
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

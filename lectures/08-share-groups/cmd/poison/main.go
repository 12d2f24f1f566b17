// Command poison shows a share group stopping a poison message: one ticket
// every barista fails on is released each time, its delivery count rises,
// and the broker archives it at the delivery limit; a rejected ticket is
// archived at once; the other tickets flow on.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/08-share-groups/poison"
)

func main() {
	c := poison.Defaults
	asJSON := flag.Bool("json", false, "print JSON")
	flag.IntVar(&c.Limit, "limit", c.Limit, "the group's share.delivery.count.limit: deliveries before a ticket is archived (2-10)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: poison [-limit N] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(c.Limit >= 2 && c.Limit <= 10, "limit", c.Limit, "Kafka takes a group delivery limit from 2 to 10")
	fc.NoArgs()
	fc.ExitOnUsageError("poison")
	brewkit.Main("poison", func(ctx context.Context, cfg brewkit.Config) error {
		r, err := poison.Run(ctx, cfg, c, func(s string) { fmt.Fprintln(os.Stderr, s) })
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

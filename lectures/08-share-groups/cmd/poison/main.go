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
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: poison [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.NoArgs()
	fc.Exit("poison")
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

// Command describe shows a consumer group as Kafka's kafka-consumer-groups
// --describe does: protocol, assignor, state, and per partition the
// committed offset, the log end, the lag and the member that owns it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/describe"
)

func main() {
	group := flag.String("group", "brew.kitchen", "consumer group to describe")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: describe [-group G] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Name("group", *group)
	fc.NoArgs()
	fc.ExitOnUsageError("describe")
	brewkit.Main("describe", func(ctx context.Context, cfg brewkit.Config) error {
		cl, adm, err := brewkit.Connect(ctx, cfg)
		if err != nil {
			return err
		}
		defer cl.Close()
		g, err := describe.Describe(ctx, adm, *group)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(g)
		}
		g.Print(os.Stdout)
		return nil
	})
}

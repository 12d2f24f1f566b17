// Command describe shows a share group: state, members, assignments, and per
// partition the share-partition start offset and lag (kadm).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/08-share-groups/describe"
)

func main() {
	group := flag.String("group", "", "share group to describe (default: make one on a fresh topic, describe it, clean up)")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: describe [-group G] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	if brewkit.Given("group") {
		fc.Name("group", *group) // -group= is a mistake; no -group makes a demo group
	}
	fc.NoArgs()
	fc.ExitOnUsageError("describe")
	brewkit.Main("describe", func(ctx context.Context, cfg brewkit.Config) (err error) {
		var g describe.Group
		if *group == "" {
			g, err = describe.Demo(ctx, cfg, nil)
		} else {
			g, err = describeGroup(ctx, cfg, *group)
		}
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

func describeGroup(ctx context.Context, cfg brewkit.Config, group string) (describe.Group, error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return describe.Group{}, err
	}
	defer cl.Close()
	return describe.Describe(ctx, adm, group)
}

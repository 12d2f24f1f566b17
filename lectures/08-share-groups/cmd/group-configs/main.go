// Command group-configs lists the configs Kafka keeps per group (the config
// resource GROUP) with their values and where each comes from: by default a
// share group's (share.*, errors.deadletterqueue.*), with -all every one.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/08-share-groups/groupconfigs"
)

func main() {
	group := flag.String("group", "", "group whose configs to list (default: a name no group uses, which shows Kafka's defaults)")
	all := flag.Bool("all", false, "every group config, consumer.* and streams.* too")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: group-configs [-group G] [-all] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	if brewkit.Given("group") {
		fc.Name("group", *group)
	}
	fc.NoArgs()
	fc.ExitOnUsageError("group-configs")
	brewkit.Main("group-configs", func(ctx context.Context, cfg brewkit.Config) error {
		r, err := groupconfigs.Run(ctx, cfg, *group, *all)
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

// Command inspect describes the Brew topics (or -topic): per partition the
// leader, replicas, ISR, offline replicas and log offsets, and the topic's
// own configs. -create makes the Brew topics first.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/02-topics-partitions/inspect"
)

func main() {
	topic := flag.String("topic", "", "comma-separated topics to describe (default: the Brew topics)")
	create := flag.Bool("create", false, "create the Brew topics that do not exist yet")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: inspect [-create] [-topic a,b] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	var names []string
	if *topic != "" || brewkit.Given("topic") {
		names = fc.Topics("topic", *topic)
	}
	fc.NoArgs()
	fc.ExitOnUsageError("inspect")
	brewkit.Main("inspect", func(ctx context.Context, cfg brewkit.Config) error {
		return run(ctx, cfg, names, *create, *asJSON)
	})
}

// run describes the topics names, or the Brew topics when there are none.
func run(ctx context.Context, cfg brewkit.Config, names []string, create, asJSON bool) error {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	if create {
		made, err := brewkit.EnsureTopics(ctx, adm, brewkit.Catalog...)
		if err != nil {
			return err
		}
		if len(made) > 0 {
			fmt.Fprintf(os.Stderr, "created %s\n", strings.Join(made, ", "))
		}
	}
	if len(names) == 0 {
		for _, t := range brewkit.Catalog {
			names = append(names, t.Name)
		}
	}
	ts, err := inspect.Describe(ctx, adm, names...)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(ts)
	}
	for i, t := range ts {
		if i > 0 {
			fmt.Println()
		}
		t.Print(os.Stdout)
	}
	return nil
}

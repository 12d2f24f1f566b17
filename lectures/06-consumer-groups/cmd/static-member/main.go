// Command static-member restarts a member of a two-member group within the
// session timeout, once as a static member (group.instance.id) and once as a
// dynamic one, and shows what the group saw each time.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/staticmember"
)

func main() {
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: static-member [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.NoArgs()
	fc.ExitOnUsageError("static-member")
	brewkit.Main("static-member", func(ctx context.Context, cfg brewkit.Config) error {
		res, err := staticmember.Run(ctx, cfg, func(s string) { fmt.Fprintln(os.Stderr, s) })
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

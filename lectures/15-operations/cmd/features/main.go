// Command features (`make features`) shows what `kafka-features describe`
// shows, asked of every node: each feature the cluster finalized, the range
// of levels each node supports, what the finalized level turns on, whether
// the cluster could be upgraded further, and the cluster's own answer to a
// dry run of a metadata.version downgrade.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/15-operations/features"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: features [flags]

Sends ApiVersions to every broker of the cluster and prints the features
(KIP-584) as kafka-features describe does: the level the cluster finalized,
the levels each node supports, and whether every node supports a newer one
(kafka-features upgrade could finalize it). One line per feature says what
its finalized level turns on.

Unless -check-downgrade=false, it also asks the cluster, validate only
(nothing changes), whether it would take metadata.version one level down,
as kafka-features downgrade --dry-run does.

`)
		flag.PrintDefaults()
	}
	check := flag.Bool("check-downgrade", true, "ask the cluster, validate only, whether it would downgrade metadata.version by one level")
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.NoArgs()
	fc.ExitOnUsageError("features")

	brewkit.Main("features", func(ctx context.Context, cfg brewkit.Config) error {
		cl, _, err := brewkit.Connect(ctx, cfg)
		if err != nil {
			return err
		}
		defer cl.Close()
		r, err := features.Describe(ctx, cl, features.Options{CheckDowngrade: *check})
		if err != nil {
			return err
		}
		r.Print(os.Stdout)
		if n := len(r.Nodes) - r.Answered(); n > 0 {
			return fmt.Errorf("%d of %d nodes did not answer ApiVersions (above)", n, len(r.Nodes))
		}
		return nil
	})
}

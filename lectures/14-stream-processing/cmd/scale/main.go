// Command scale (`make scale`) runs two, then three instances of the
// analytics service in one consumer group, in this process: they share the
// orders by partition, each restores only its partitions' state from the
// changelog, and the third, a standby that read the changelog before
// joining, takes its partitions over reading next to nothing. At the end
// the changelog's windows are held to a batch recount.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/scale"
)

func main() {
	c := scale.Defaults
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: scale [flags]

Writes -orders orders of %d shops to a fresh topic brew.stream.scale.*
(%d partitions) in %d chunks. Instance a counts the first; before the
second, instance b joins the group cold (an empty local store); before the
third, instance c joins as a standby (it restored every changelog partition
first). Each waits until the group's lag is 0, then the run prints who
counted what, what each restore read, and checks the changelog's windows
against a batch recount. Topics, group and local stores are deleted at the
end.

`, c.Plan.Shops, scale.Partitions, scale.Chunks)
		flag.PrintDefaults()
	}
	flag.IntVar(&c.Plan.Orders, "orders", c.Plan.Orders, "how many orders the till writes")
	flag.Uint64Var(&c.Plan.Seed, "seed", c.Plan.Seed, "seeds the orders: one seed, one set of windows")
	flag.StringVar(&c.Dir, "dir", "", "where the instances' local stores go (a folder of the run's own inside; default a temporary folder)")
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(c.Plan.Orders >= 300 && c.Plan.Orders <= 100_000, "orders", c.Plan.Orders, "must be 300 to 100000")
	fc.NoArgs()
	fc.ExitOnUsageError("scale")

	brewkit.Main("scale", func(ctx context.Context, cfg brewkit.Config) error {
		c.Progress = func(s string) { fmt.Println(s) } // progress on stdout: stderr is for the one line of a failure
		r, err := scale.Run(ctx, cfg, c)
		if err != nil {
			return err
		}
		fmt.Println()
		r.Print(os.Stdout)
		if !r.Exact() {
			return scale.ErrNotExact
		}
		return nil
	})
}

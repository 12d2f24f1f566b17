// Command zombie starts two producers with one transactional id: the newer
// fences the older, whose commit is refused; prints both producers' ids and
// epochs and what a read_committed reader sees.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/txns"
)

func main() {
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: zombie [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.NoArgs()
	fc.ExitOnUsageError("zombie")
	brewkit.Main("zombie", func(ctx context.Context, cfg brewkit.Config) error {
		cl, adm, err := brewkit.Connect(ctx, cfg)
		if err != nil {
			return err
		}
		defer cl.Close()
		topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.zombie.", Partitions: 1})
		if err != nil {
			return err
		}
		defer drop(ctx) //nolint:errcheck // a leftover demo topic is harmless
		z, err := txns.RunZombie(ctx, cfg, adm, topic)
		if err != nil {
			return err
		}
		if *asJSON {
			err = json.NewEncoder(os.Stdout).Encode(z)
		} else {
			z.Print(os.Stdout)
		}
		if err == nil && !z.OldFenced {
			err = errors.New("the old producer was not fenced")
		}
		return err
	})
}

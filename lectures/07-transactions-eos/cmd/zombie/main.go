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
	"math/rand/v2"
	"os"
	"time"

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
		topic := fmt.Sprintf("brew.zombie.%d", rand.Uint32()%1e6)
		if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.Topic{Name: topic, Partitions: 1, RF: 3, Retention: time.Hour}); err != nil {
			return err
		}
		defer adm.DeleteTopics(context.WithoutCancel(ctx), topic) //nolint:errcheck // a leftover demo topic is harmless
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

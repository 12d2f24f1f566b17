// Command crash-drill kills the kitchen service with SIGKILL at seeded random
// points (how many orders in, which stage of a batch), restarts it each time,
// and verifies with read_committed that every order was cooked exactly once;
// with -no-eos, the same crashes without transactions.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/drill"
)

func main() {
	c := drill.Defaults
	flag.IntVar(&c.Orders, "orders", c.Orders, "orders to cook")
	flag.IntVar(&c.Crashes, "crashes", c.Crashes, "how many times the kitchen is killed")
	flag.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the crash points")
	flag.BoolVar(&c.NoEOS, "no-eos", false, "the kitchen without transactions")
	kitchen := flag.String("kitchen", "", "the kitchen binary (default: kitchen next to this program, as make demo-crash builds them)")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: crash-drill [-orders 300] [-crashes 10] [-seed 7] [-no-eos] [-kitchen PATH] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(c.Orders >= 1, "orders", c.Orders, "must be at least 1")
	fc.Require(c.Crashes >= 0, "crashes", c.Crashes, "must not be negative")
	k, err := kitchenCommand(*kitchen)
	fc.Require(err == nil, "kitchen", *kitchen, fmt.Sprint(err))
	fc.NoArgs()
	fc.ExitOnUsageError("crash-drill")
	c.Kitchen = []string{k}

	brewkit.Main("crash-drill", func(ctx context.Context, cfg brewkit.Config) error {
		res, err := drill.Run(ctx, cfg, c, func(s string) { fmt.Fprintln(os.Stderr, s) })
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

// kitchenCommand is the kitchen binary to crash: the one given, or the one
// built next to this program. Not `go run`: a SIGKILL would hit the program go
// run started, and go run would report an ordinary failure.
func kitchenCommand(given string) (string, error) {
	if given == "" {
		self, err := os.Executable()
		if err != nil {
			return "", err
		}
		given = filepath.Join(filepath.Dir(self), "kitchen")
	}
	if st, err := os.Stat(given); err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("no kitchen binary at %s: build it with `go build -o DIR ./cmd/kitchen ./cmd/crash-drill` (make demo-crash does)", given)
	}
	return given, nil
}

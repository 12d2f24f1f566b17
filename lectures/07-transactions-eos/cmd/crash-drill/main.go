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
	"io"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/crashdrill"
	"github.com/brew-course/kafka/lectures/07-transactions-eos/kitchen"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "kitchen" {
		runKitchen(os.Args[2:])
		return
	}
	c := crashdrill.Defaults
	flag.IntVar(&c.Orders, "orders", c.Orders, "orders to cook")
	flag.IntVar(&c.Crashes, "crashes", c.Crashes, "how many times the kitchen is killed")
	flag.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the crash points")
	flag.BoolVar(&c.NoEOS, "no-eos", false, "the kitchen without transactions")
	kitchenBin := flag.String("kitchen", "", "a kitchen binary to crash (default: this program's own kitchen)")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: crash-drill [-orders 300] [-crashes 10] [-seed 7] [-no-eos] [-kitchen PATH] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(c.Orders >= 1, "orders", c.Orders, "must be at least 1")
	fc.Require(c.Crashes >= 0, "crashes", c.Crashes, "must not be negative")
	k, err := kitchenCommand(*kitchenBin)
	fc.Require(err == nil, "kitchen", *kitchenBin, fmt.Sprint(err))
	fc.NoArgs()
	fc.ExitOnUsageError("crash-drill")
	c.Kitchen = k

	// What the drill does goes to stdout (not with -json): stderr is for
	// the one line that says why it failed.
	var progress io.Writer = os.Stdout
	if *asJSON {
		progress = io.Discard
	}
	brewkit.Main("crash-drill", func(ctx context.Context, cfg brewkit.Config) error {
		res, err := crashdrill.Run(ctx, cfg, c, func(s string) { fmt.Fprintln(progress, s) })
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

// kitchenCommand is the kitchen to crash: the binary given, or this program
// run as `crash-drill kitchen`. Not `go run`: a SIGKILL would hit the
// program go run started, and go run would report an ordinary failure.
func kitchenCommand(given string) ([]string, error) {
	if given == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		return []string{self, "kitchen"}, nil
	}
	if st, err := os.Stat(given); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("no kitchen binary at %s: build it with `go build -o DIR ./cmd/kitchen`, or leave -kitchen out", given)
	}
	return []string{given}, nil
}

// runKitchen is `crash-drill kitchen FLAGS`: the kitchen program, with the
// flags the drill gives it.
func runKitchen(args []string) {
	c := kitchen.Defaults
	fs := flag.NewFlagSet("kitchen", flag.ExitOnError)
	fs.StringVar(&c.In, "in", c.In, "topic to read orders from")
	fs.StringVar(&c.Out, "out", c.Out, "topic to write kitchen events to")
	fs.StringVar(&c.Group, "group", c.Group, "consumer group")
	fs.StringVar(&c.ID, "id", c.ID, "transactional id and group instance id")
	fs.BoolVar(&c.NoEOS, "no-eos", false, "no transactions: write the events, then commit the offsets")
	fs.IntVar(&c.CrashAfter, "crash-after", 0, "kill itself (SIGKILL) in the batch that reaches this many orders")
	stage := fs.String("crash-at", string(c.CrashAt), "where in that batch: poll, produce, flushed, offsets or commit")
	fs.DurationVar(&c.Idle, "idle", 0, "stop after this long without orders (0: run until Ctrl-C)")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	st, err := kitchen.ParseStage(*stage)
	if err != nil || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "kitchen: needs known flags and a known -crash-at stage")
		os.Exit(2)
	}
	c.CrashAt = st
	brewkit.Main("kitchen", func(ctx context.Context, cfg brewkit.Config) error {
		fmt.Println(c.Banner())
		stats, err := kitchen.Run(ctx, cfg, c, func(s string) { fmt.Println(s) })
		if err != nil {
			return err
		}
		fmt.Println(stats.Summary(c.ID))
		return nil
	})
}

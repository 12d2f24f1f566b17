// Command state measures the analytics service's restart: its windows
// restored from the changelog onto its local store, and with the local
// store deleted, for changelogs of growing size.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/state"
)

func main() {
	sizes := flag.String("orders", joined(state.Sizes), "the runs' order counts, comma-separated")
	dir := flag.String("dir", ".state", "where the local stores go")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: state [-orders 2500,10000,25000] [-json]

For each size: the till writes that many orders of 80 shops over an hour,
the analytics service counts them and stops, and its state is restored from
the changelog twice: onto its local store (a restart: it reads only what the
store lacks) and with no local store (a new disk: the whole changelog). The
restored windows are compared with the ones before.

`)
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		fc.Require(err == nil && n >= 1, "orders", *sizes, "give order counts of at least 1, comma-separated")
		ns = append(ns, n)
	}
	fc.NoArgs()
	fc.ExitOnUsageError("state")
	brewkit.Main("state", func(ctx context.Context, cfg brewkit.Config) error {
		say := func(s string) { fmt.Println(s) }
		if *asJSON {
			say = func(string) {}
		}
		runs, err := state.Measure(ctx, cfg, ns, *dir, say)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(runs)
		}
		fmt.Println()
		state.Print(os.Stdout, runs)
		return nil
	})
}

func joined(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

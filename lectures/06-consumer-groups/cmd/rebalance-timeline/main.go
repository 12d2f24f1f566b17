// Command rebalance-timeline measures a rebalance under each protocol: two
// member processes share a 6-partition topic while orders flow, a third
// joins, then one is killed with SIGKILL. It prints how many partitions had no
// owner in each rebalance and for how long, and how many records were
// processed twice; with -png it also draws who owned each partition over
// time. `rebalance-timeline member ...` is one member process.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
	"github.com/brew-course/kafka/lectures/06-consumer-groups/rebalancetimeline"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "member" {
		groups.ServeProcess("member", os.Args[2:])
		return
	}
	c := rebalancetimeline.Defaults
	flag.IntVar(&c.Rate, "rate", c.Rate, "orders per second")
	flag.DurationVar(&c.Settle, "settle", c.Settle, "how long the group works between the steps")
	only := flag.String("protocol", "", "measure only one: "+groups.ProtocolUsage)
	asJSON := flag.Bool("json", false, "print JSON")
	pngFile := flag.String("png", "", "also draw each partition's owners over time into this PNG file")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: rebalance-timeline [-rate 100] [-settle 3s] [-protocol P] [-json] [-png FILE]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(c.Rate >= 1, "rate", c.Rate, "must be at least 1")
	fc.Require(c.Settle > 0, "settle", c.Settle, "must be > 0")
	protocols := groups.Protocols
	if *only != "" {
		p, err := groups.ParseProtocol(*only)
		fc.Require(err == nil, "protocol", *only, "use eager, cooperative or consumer")
		protocols = []groups.Protocol{p}
	}
	fc.NoArgs()
	fc.ExitOnUsageError("rebalance-timeline")
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rebalance-timeline:", err)
		os.Exit(1)
	}
	c.Member = []string{self, "member"}
	if *pngFile != "" {
		// Before a run of a minute and a half, not after it.
		if err := os.MkdirAll(filepath.Dir(*pngFile), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "rebalance-timeline:", err)
			os.Exit(1)
		}
	}
	brewkit.Main("rebalance-timeline", func(ctx context.Context, cfg brewkit.Config) error {
		rows, err := rebalancetimeline.Run(ctx, cfg, c, protocols, func(s string) { fmt.Fprintln(os.Stderr, s) })
		if err != nil {
			return err
		}
		if *pngFile != "" {
			if err := writeChart(*pngFile, rows); err != nil {
				return err
			}
			fmt.Fprintln(os.Stderr, "wrote", *pngFile)
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(rows)
		}
		rebalancetimeline.Print(os.Stdout, rows)
		return nil
	})
}

// writeChart draws the rows into file. It writes a file beside it first and
// renames it, so a failure leaves the picture there was.
func writeChart(file string, rows []rebalancetimeline.Row) error {
	tmp := file + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	err = rebalancetimeline.WriteChart(f, rows)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, file)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

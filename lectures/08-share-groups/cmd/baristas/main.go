// Command baristas runs N consumers on a topic of drink tickets, each taking
// a ticket, working on it and acknowledging it: as a share group (any
// barista takes any ticket, however few partitions) or, with -mode group, as
// a consumer group. -table measures both with 1, 3 and 6 consumers on one
// partition.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/08-share-groups/baristas"
)

func main() {
	c := baristas.Defaults
	mode := flag.String("mode", string(c.Mode), "share (a share group) or group (a consumer group)")
	flag.IntVar(&c.Consumers, "consumers", c.Consumers, "baristas")
	partitions := flag.Int("partitions", int(c.Partitions), "partitions of the tickets topic")
	flag.IntVar(&c.Tickets, "tickets", c.Tickets, "tickets to make")
	flag.DurationVar(&c.Work, "work", c.Work, "time per ticket")
	table := flag.Bool("table", false, "measure share and consumer groups with 1, 3 and 6 consumers on one partition")
	out := flag.String("out", "", "with -table: also write the table to DIR/throughput.csv, which chart draws")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: baristas [-mode share|group] [-consumers 6] [-partitions 1] [-tickets 120] [-work 20ms] [-table [-out DIR]] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	c.Mode = baristas.Mode(*mode)
	fc.Require(c.Mode == baristas.Share || c.Mode == baristas.Group, "mode", *mode, "use share or group")
	fc.Require(c.Consumers >= 1 && c.Consumers <= 50, "consumers", c.Consumers, "must be between 1 and 50")
	fc.Require(*partitions >= 1 && *partitions <= 100, "partitions", *partitions, "must be between 1 and 100")
	fc.Require(c.Tickets >= 1, "tickets", c.Tickets, "must be at least 1")
	fc.Require(c.Work >= 0, "work", c.Work, "must not be negative")
	fc.Require(*out == "" || *table, "out", *out, "goes with -table")
	fc.NoArgs()
	fc.ExitOnUsageError("baristas")
	c.Partitions = int32(*partitions)
	say := func(s string) { fmt.Fprintln(os.Stderr, s) }
	brewkit.Main("baristas", func(ctx context.Context, cfg brewkit.Config) error {
		if *table {
			if *out != "" {
				// Before the measurement, not after it.
				if fi, err := os.Stat(*out); err != nil || !fi.IsDir() {
					return fmt.Errorf("-out %s: not a directory", *out)
				}
			}
			rs, err := baristas.Table(ctx, cfg, c, []int{1, 3, 6}, say)
			if err != nil {
				return err
			}
			if *out != "" {
				if err := writeCSV(filepath.Join(*out, "throughput.csv"), rs); err != nil {
					return err
				}
			}
			if *asJSON {
				return json.NewEncoder(os.Stdout).Encode(rs)
			}
			baristas.PrintTable(os.Stdout, rs)
			return nil
		}
		r, err := baristas.Run(ctx, cfg, c, say)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(r)
		}
		r.Print(os.Stdout)
		return nil
	})
}

// writeCSV writes the throughput table to path.
func writeCSV(path string, rs []baristas.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := baristas.WriteCSV(f, rs); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	fmt.Fprintln(os.Stderr, "wrote", path)
	return nil
}

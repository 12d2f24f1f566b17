// Command compare runs one Brew workload with identical settings through
// franz-go, sarama, kafka-go and Kafka's own Java tools, three interleaved
// runs each after a warm-up, and prints the median and range; with -out it
// also writes results/compare.md and results/compare.csv (chart draws the PNG).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/09-clients-throughput/compare"
)

// The files compare -out writes.
const (
	mdFile  = "compare.md"
	csvFile = "compare.csv"
)

// checkOut makes dir and checks that the results can be written there, so
// that a bad -out fails at once, not after minutes of benchmark. It leaves
// the results of an earlier run as they are.
func checkOut(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	probe, err := os.CreateTemp(dir, ".compare-*")
	if err != nil {
		return err
	}
	probe.Close()
	os.Remove(probe.Name())
	for _, name := range []string{mdFile, csvFile} {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		f.Close()
	}
	return nil
}

func main() {
	c := compare.Defaults
	w := &c.Workload
	flag.IntVar(&w.Records, "records", w.Records, "records per run")
	flag.IntVar(&w.Size, "size", w.Size, "record size in bytes")
	flag.DurationVar(&w.Linger, "linger", w.Linger, "linger for every client")
	flag.IntVar(&w.BatchBytes, "batch", w.BatchBytes, "batch size in bytes for every client")
	flag.StringVar(&w.Compression, "compression", w.Compression, "none, gzip, snappy, lz4 or zstd for every client")
	flag.IntVar(&c.Runs, "runs", c.Runs, "runs per client")
	flag.IntVar(&c.Rate, "rate", c.Rate, "records/s of the latency round, below saturation (0: no latency round)")
	flag.IntVar(&c.PacedRecords, "paced-records", c.PacedRecords, "records per client in the latency round")
	clients := flag.String("clients", "all", "franz-go, sarama, kafka-go, java, comma-separated, or all")
	out := flag.String("out", "", "directory to write compare.md and compare.csv to")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: compare [flags]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	var err error
	c.Clients, err = compare.ParseClients(*clients)
	fc.Require(err == nil, "clients", *clients, "use franz-go, sarama, kafka-go, java or all")
	fc.Require(w.Records >= 100, "records", w.Records, "must be at least 100")
	fc.Require(w.Size >= 16 && w.Size <= 1<<20, "size", w.Size, "must be between 16 and 1048576")
	fc.Require(c.Runs >= 1, "runs", c.Runs, "must be at least 1")
	fc.Require(c.Rate >= 0 && c.Rate <= 1_000_000, "rate", c.Rate, "must be between 0 (no latency round) and 1000000")
	fc.Require(c.PacedRecords >= 100, "paced-records", c.PacedRecords, "must be at least 100")
	fc.Require(w.Linger >= 0, "linger", w.Linger, "must not be negative")
	fc.Require(w.BatchBytes >= 1024, "batch", w.BatchBytes, "must be at least 1024")
	if *out != "" {
		err := checkOut(*out)
		fc.Require(err == nil, "out", *out, fmt.Sprintf("cannot write the results there: %v", err))
	}
	_, cerr := compare.Codecs(w.Compression)
	fc.Require(cerr == nil, "compression", w.Compression, "use none, gzip, snappy, lz4 or zstd")
	fc.NoArgs()
	fc.ExitOnUsageError("compare")
	brewkit.Main("compare", func(ctx context.Context, cfg brewkit.Config) error {
		res, err := compare.Run(ctx, cfg, c, func(s string) { fmt.Fprintln(os.Stderr, s) })
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(res)
		}
		res.Print(os.Stdout)
		if *out == "" {
			return nil
		}
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
		md, err := os.Create(filepath.Join(*out, mdFile))
		if err != nil {
			return err
		}
		res.Markdown(md)
		if err := md.Close(); err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(*out, csvFile))
		if err != nil {
			return err
		}
		if err := res.CSV(f); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "wrote %s and %s\n", md.Name(), f.Name())
		return nil
	})
}

// Command bench measures franz-go producing and consuming with every knob
// that matters, and prints the effective configuration with the figures.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/09-clients-throughput/bench"
	"github.com/brew-course/kafka/lectures/09-clients-throughput/perf"
)

func main() {
	c := bench.Defaults
	flag.IntVar(&c.Records, "records", c.Records, "records to produce and consume")
	flag.IntVar(&c.Size, "size", c.Size, "record size in bytes")
	partitions := flag.Int("partitions", int(c.Partitions), "partitions of the fresh topic")
	flag.StringVar(&c.Acks, "acks", c.Acks, "all, 1 or 0")
	flag.BoolVar(&c.Idempotent, "idempotent", c.Idempotent, "idempotent producer (needs acks=all)")
	flag.DurationVar(&c.Linger, "linger", c.Linger, "how long a batch waits for more records")
	flag.IntVar(&c.BatchBytes, "batch", c.BatchBytes, "maximum batch size in bytes")
	flag.IntVar(&c.MaxInflight, "in-flight", c.MaxInflight, "produce requests in flight per broker")
	flag.StringVar(&c.Compression, "compression", c.Compression, "none, gzip, snappy, lz4 or zstd")
	flag.IntVar(&c.Producers, "producers", c.Producers, "producer clients in parallel")
	flag.IntVar(&c.Consumers, "consumers", c.Consumers, "consumer clients in parallel")
	flag.StringVar(&c.Partitioner, "partitioner", c.Partitioner, "sticky (franz-go's default) or roundrobin (kafka-go's)")
	flag.IntVar(&c.E2ERate, "e2e-rate", 0, "add an end-to-end latency phase at this many records/s (0: none)")
	flag.DurationVar(&c.E2EFor, "e2e-for", c.E2EFor, "how long the end-to-end phase runs")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: bench [flags]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	c.Partitions = int32(*partitions)
	var fc brewkit.FlagCheck
	fc.Require(c.Records >= 1, "records", c.Records, "must be at least 1")
	fc.Require(c.Size >= 1 && c.Size <= 1<<20, "size", c.Size, "must be between 1 and 1048576")
	fc.Require(*partitions >= 1 && *partitions <= 1000, "partitions", *partitions, "must be between 1 and 1000")
	fc.Require(c.Linger >= 0, "linger", c.Linger, "must not be negative")
	fc.Require(c.BatchBytes >= 1024, "batch", c.BatchBytes, "must be at least 1024")
	fc.Require(c.Producers >= 1 && c.Producers <= 64, "producers", c.Producers, "must be between 1 and 64")
	fc.Require(c.Consumers >= 1 && c.Consumers <= 64, "consumers", c.Consumers, "must be between 1 and 64")
	fc.Require(c.MaxInflight >= 1, "in-flight", c.MaxInflight, "must be at least 1")
	fc.Require(c.Partitioner == "sticky" || c.Partitioner == "roundrobin", "partitioner", c.Partitioner, "use sticky or roundrobin")
	fc.Require(c.E2ERate >= 0 && c.E2ERate <= 100_000, "e2e-rate", c.E2ERate, "must be between 0 and 100000")
	fc.Require(c.E2EFor > 0 && c.E2EFor <= 10*time.Minute, "e2e-for", c.E2EFor, "must be between 1ns and 10m")
	fc.Require(c.Acks == "all" || c.Acks == "1" || c.Acks == "0", "acks", c.Acks, "use all, 1 or 0")
	fc.Require(!c.Idempotent || c.Acks == "all", "acks", c.Acks, "an idempotent producer needs acks=all (add -idempotent=false)")
	_, err := perf.Codec(c.Compression)
	fc.Require(err == nil, "compression", c.Compression, "use none, gzip, snappy, lz4 or zstd")
	fc.Require(!c.Idempotent || c.MaxInflight == 5, "in-flight", c.MaxInflight, "an idempotent franz-go producer keeps 5 (add -idempotent=false)")
	fc.NoArgs()
	fc.ExitOnUsageError("bench")
	brewkit.Main("bench", func(ctx context.Context, cfg brewkit.Config) error {
		r, err := bench.Run(ctx, cfg, c)
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

// Command partition-count (`make partition-count`) measures what one
// partition takes from a producer (acks=all, RF 3) and what one consumer
// reads from it, sizes Brew's topics with those numbers, and counts the keys
// that growing a topic from 6 partitions moves to another partition.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/15-operations/partitioncount"
)

func main() {
	o := partitioncount.Defaults
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: partition-count [flags]

Creates a fresh topic %s* of 1 partition on 3 replicas, writes
-bytes-byte order events to it for -duration or -max-records, whichever
comes first (acks=all, idempotent), reads them all back with one consumer,
and deletes the topic. With the two rates it sizes each of Brew's topics:

  partitions = max(target / produce per partition,
                   target / consume per consumer, consumers wanted)

rounded up to a count the brokers and the consumers share evenly. Then it
counts the keys (80 shops, %d order ids) that move to another partition
when a topic grows from 6 to 7, 8 and 12 partitions.

The rates vary from run to run and machine to machine; the key movements
are exact.

`, partitioncount.TopicPrefix, partitioncount.OrderKeyCount)
		flag.PrintDefaults()
	}
	flag.DurationVar(&o.Duration, "duration", o.Duration, "how long the producer writes")
	flag.IntVar(&o.RecordBytes, "bytes", o.RecordBytes, "the size of each record's value")
	flag.Int64Var(&o.MaxRecords, "max-records", o.MaxRecords, "stop the producer after this many records, before -duration if it is fast")
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(o.Duration >= 500*time.Millisecond && o.Duration <= time.Minute, "duration", o.Duration, "must be 500ms to 1m")
	fc.Require(o.MaxRecords >= 1000 && o.MaxRecords <= 10_000_000, "max-records", o.MaxRecords, "must be 1000 to 10000000")
	fc.Require(o.RecordBytes >= 100 && o.RecordBytes <= 100_000, "bytes", o.RecordBytes, "must be 100 to 100000")
	fc.NoArgs()
	fc.ExitOnUsageError("partition-count")

	brewkit.Main("partition-count", func(ctx context.Context, cfg brewkit.Config) error {
		o.Progress = func(s string) { fmt.Println(s) } // progress on stdout: stderr is for the one line of a failure
		r, err := partitioncount.Run(ctx, cfg, o)
		if err != nil {
			return err
		}
		fmt.Println()
		r.Print(os.Stdout)
		return nil
	})
}

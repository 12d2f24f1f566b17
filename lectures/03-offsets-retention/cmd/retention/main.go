// Command retention shows the log start offset of a short-retention topic
// moving a whole segment at a time, then moves it by hand with DeleteRecords.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/03-offsets-retention/retention"
)

func main() {
	c := retention.Defaults
	flag.StringVar(&c.By, "by", c.By, "retention by time (retention.ms) or bytes (retention.bytes)")
	flag.DurationVar(&c.Retention, "retention", c.Retention, "retention.ms with -by time")
	flag.Int64Var(&c.Bytes, "bytes", c.Bytes, "retention.bytes with -by bytes")
	flag.DurationVar(&c.Segment, "segment", c.Segment, "segment.ms: how often a new segment starts")
	flag.IntVar(&c.Rate, "rate", c.Rate, "records per second")
	flag.DurationVar(&c.Duration, "duration", c.Duration, "how long to write and watch")
	asJSON := flag.Bool("json", false, "print the result as JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: retention [-by time|bytes] [-retention 15s] [-bytes 65536] [-segment 3s] [-rate 20] [-duration 40s] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(c.By == "time" || c.By == "bytes", "by", c.By, "use time or bytes")
	fc.Require(c.Retention > 0, "retention", c.Retention, "must be > 0")
	fc.Require(c.Bytes > 0, "bytes", c.Bytes, "must be > 0")
	fc.Require(c.Rate >= 1, "rate", c.Rate, "must be at least 1")
	fc.Require(c.Segment > 0, "segment", c.Segment, "must be > 0")
	fc.Require(c.Duration > 0, "duration", c.Duration, "must be > 0")
	fc.NoArgs()
	fc.ExitOnUsageError("retention")
	brewkit.Main("retention", func(ctx context.Context, cfg brewkit.Config) error {
		say := func(s string) {
			if !*asJSON {
				fmt.Println(s)
			}
		}
		res, err := retention.Run(ctx, cfg, c, say)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(res)
		}
		if res.Simulated {
			fmt.Println("(embedded simulation: kfake drops expired batches, not whole segments, and has no segment files)")
		}
		return nil
	})
}

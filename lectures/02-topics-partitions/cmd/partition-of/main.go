// Command partition-of predicts the partition of each key the way the Java
// client's default partitioner does: murmur2(key), made positive, modulo the
// partition count. No cluster is needed.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/02-topics-partitions/partition"
)

func main() {
	n := flag.Int("partitions", 6, "partition count")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: partition-of [-partitions 6] KEY...\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(*n >= 1, "partitions", *n, "must be at least 1")
	if flag.NArg() == 0 {
		fc.Problem("no key given: partition-of KEY...")
	}
	fc.ExitOnUsageError("partition-of")
	t := brewkit.NewTable(os.Stdout, "KEY", "MURMUR2", "POSITIVE", "PARTITION")
	for _, k := range flag.Args() {
		h := partition.Murmur2([]byte(k))
		t.Row(k, int32(h), partition.Positive(h), partition.ForKey([]byte(k), int32(*n)))
	}
	t.Flush()
}

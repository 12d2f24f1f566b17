// Command timeline draws a failover drill's timeline — the leader and ISR of
// the drilled partition and the acknowledged writes, second by second — as
// a PNG, from the report `failover -save` writes.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/04-replication-isr/failover"
	"github.com/brew-course/kafka/lectures/04-replication-isr/timeline"
)

func main() {
	in := flag.String("in", "results/drill.json", "the drill's report (failover -save writes it)")
	out := flag.String("out", "results/drill-timeline.png", "the PNG to write")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: timeline [-in results/drill.json] [-out results/drill-timeline.png]\n\n"+
			"Draws a failover drill's leader, ISR and acknowledged writes over time; `make timeline` runs the drill and draws it.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(*in != "", "in", *in, "must not be empty")
	fc.Require(*out != "", "out", *out, "must not be empty")
	fc.NoArgs()
	fc.ExitOnUsageError("timeline")
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "timeline:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	b, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("%w (`make timeline` runs the drill and writes it)", err)
	}
	var rep failover.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := timeline.Draw(f, rep); err != nil {
		f.Close()
		os.Remove(out)
		return fmt.Errorf("%s: %w", in, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "wrote", out)
	return nil
}

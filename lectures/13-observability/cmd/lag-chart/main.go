// Command lag-chart (`make lag-chart`) draws a saved fire drill (fire-drill
// -save FILE) as a PNG: the group's lag over the drill, each fault and fix,
// and where each alert fired.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/lectures/13-observability/firedrill"
	"github.com/brew-course/kafka/lectures/13-observability/lagchart"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	in := flag.String("in", "results/fire-drill.json", "the saved drill (fire-drill -save FILE)")
	out := flag.String("out", "results/lag-over-drill.png", "the PNG to write")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: lag-chart [-in FILE] [-out FILE]\n\nDraws a saved fire drill as a PNG; needs no cluster.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(*in != "", "in", *in, "names the saved drill")
	fc.Require(*out != "", "out", *out, "names the PNG")
	fc.NoArgs()
	fc.ExitOnUsageError("lag-chart")
	if err := draw(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "lag-chart:", err)
		os.Exit(1)
	}
	fmt.Println("wrote", *out)
}

func draw(in, out string) error {
	b, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("%w (fire-drill -save %s writes it)", err, in)
	}
	var rep firedrill.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("reading %s: %w", in, err)
	}
	var buf bytes.Buffer
	if err := lagchart.Draw(&buf, &rep); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

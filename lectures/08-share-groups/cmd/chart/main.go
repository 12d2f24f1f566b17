// Command chart draws results/throughput.png from results/throughput.csv
// (written by baristas -table -out): tickets/s with 1, 3 and 6 consumers on
// one partition, a share group's bar beside a consumer group's.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot/vg"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/barchart"
)

func main() {
	dir := flag.String("dir", "results", "directory with throughput.csv; throughput.png goes there too")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: chart [-dir results]\n\nDraws DIR/throughput.png from DIR/throughput.csv, which `make baristas-table` writes.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(*dir != "", "dir", *dir, "must not be empty")
	fc.NoArgs()
	fc.ExitOnUsageError("chart")
	if err := draw(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		os.Exit(1)
	}
}

// The columns of throughput.csv that the chart reads, numbered from 1.
const (
	colMode      = 1
	colConsumers = 2
	colRate      = 6
)

// The two modes, in the order the bars stand, and their names in the legend.
var modes = []struct{ mode, legend string }{{"share", "share group"}, {"group", "consumer group"}}

// draw reads throughput.csv and draws tickets/s by number of consumers, a
// share group's bar beside a consumer group's. A mode other than share or
// group, or a count of consumers that is not a number, is an error naming
// the file, the line and the column.
func draw(dir string) error {
	runs, err := barchart.Read(filepath.Join(dir, "throughput.csv"), colRate, "make baristas-table")
	if err != nil {
		return err
	}
	var consumers []int                  // in the order of their first row
	rate := map[string]map[int]float64{} // mode: consumers: tickets/s
	for _, r := range runs.Rows {
		mode := r.Field(colMode)
		if mode != "share" && mode != "group" {
			return r.Errorf(colMode, "%q is neither share nor group", mode)
		}
		n, err := strconv.Atoi(r.Field(colConsumers))
		if err != nil || n < 1 {
			return r.Errorf(colConsumers, "%q is not a number of consumers", r.Field(colConsumers))
		}
		v, err := r.Rate(colRate, "tickets/s")
		if err != nil {
			return err
		}
		if !slices.Contains(consumers, n) {
			consumers = append(consumers, n)
		}
		if rate[mode] == nil {
			rate[mode] = map[int]float64{}
		}
		rate[mode][n] = v
	}
	chart := barchart.Bars{Title: "120 tickets of 20 ms on one partition", XLabel: "consumers", YLabel: "tickets/s"}
	for _, n := range consumers {
		chart.Groups = append(chart.Groups, strconv.Itoa(n))
	}
	for _, m := range modes {
		s := barchart.Series{Name: m.legend}
		for _, n := range consumers {
			s.Values = append(s.Values, rate[m.mode][n]) // a mode without the row: no bar
		}
		chart.Series = append(chart.Series, s)
	}
	out := filepath.Join(dir, "throughput.png")
	if err := chart.Save(out, 6*vg.Inch, 3.5*vg.Inch); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "wrote", out)
	return nil
}

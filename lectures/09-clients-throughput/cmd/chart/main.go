// Command chart draws results/compare.png from results/compare.csv (written
// by compare -out): each client's median producer and consumer records/s.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot/vg"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/barchart"
)

func main() {
	dir := flag.String("dir", "results", "directory with compare.csv; compare.png goes there too")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: chart [-dir results]\n\nDraws DIR/compare.png from DIR/compare.csv, which `make compare` writes.\n\n")
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

// The columns of compare.csv that the chart reads, numbered from 1.
const (
	colClient  = 1
	colProduce = 4
	colConsume = 5
)

// draw reads compare.csv and draws each client's median producer and
// consumer records/s over its runs, the clients in the order of their first
// run.
func draw(dir string) error {
	runs, err := barchart.Read(filepath.Join(dir, "compare.csv"), colConsume, "make compare")
	if err != nil {
		return err
	}
	var order []string
	prod, cons := map[string][]float64{}, map[string][]float64{}
	for _, r := range runs.Rows {
		p, err := r.Rate(colProduce, "records/s")
		if err != nil {
			return err
		}
		c, err := r.Rate(colConsume, "records/s")
		if err != nil {
			return err
		}
		client := r.Field(colClient)
		if !slices.Contains(order, client) {
			order = append(order, client)
		}
		prod[client] = append(prod[client], p)
		cons[client] = append(cons[client], c)
	}
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	chart := barchart.Bars{
		Title:  "Brew workload: median records/s",
		YLabel: "records/s",
		Groups: order,
		Series: []barchart.Series{{Name: "produce"}, {Name: "consume"}},
	}
	for _, name := range order {
		chart.Series[0].Values = append(chart.Series[0].Values, median(prod[name]))
		chart.Series[1].Values = append(chart.Series[1].Values, median(cons[name]))
	}
	out := filepath.Join(dir, "compare.png")
	if err := chart.Save(out, 7*vg.Inch, 4*vg.Inch); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "wrote", out)
	return nil
}

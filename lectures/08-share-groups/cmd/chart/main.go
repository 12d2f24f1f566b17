// Command chart draws results/throughput.png from results/throughput.csv
// (written by baristas -table -out): tickets/s with 1, 3 and 6 consumers on
// one partition, a share group's bar beside a consumer group's.
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/brew-course/kafka/pkg/brewkit"
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

// The two modes, in the order the bars stand.
var modes = []string{"share", "group"}

// runs is the table: for each mode, tickets/s by number of consumers.
type runs struct {
	consumers []int                      // in the order of their first row
	rate      map[string]map[int]float64 // mode: consumers: tickets/s
}

// readRuns reads throughput.csv. A row that lacks a column, a mode other
// than share or group, or a count or rate that is not a number is an error
// naming the file, the line and the column.
func readRuns(f *os.File) (runs, error) {
	rs := runs{rate: map[string]map[int]float64{}}
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1 // short rows are reported below, with their column
	header, err := r.Read()
	if err != nil {
		return rs, fmt.Errorf("%s: %w", f.Name(), err)
	}
	name := func(col int) string {
		if col <= len(header) {
			return header[col-1]
		}
		return "?"
	}
	for {
		row, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return rs, fmt.Errorf("%s: %w", f.Name(), err)
		}
		line, _ := r.FieldPos(0)
		if len(row) < colRate {
			return rs, fmt.Errorf("%s:%d: column %d (%s) is missing: the row has %d columns, want %d as `make baristas-table` writes them",
				f.Name(), line, len(row)+1, name(len(row)+1), len(row), colRate)
		}
		mode := row[colMode-1]
		if !slices.Contains(modes, mode) {
			return rs, fmt.Errorf("%s:%d: column %d (%s): %q is neither share nor group", f.Name(), line, colMode, name(colMode), mode)
		}
		n, err := strconv.Atoi(row[colConsumers-1])
		if err != nil || n < 1 {
			return rs, fmt.Errorf("%s:%d: column %d (%s): %q is not a number of consumers", f.Name(), line, colConsumers, name(colConsumers), row[colConsumers-1])
		}
		v, err := strconv.ParseFloat(row[colRate-1], 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return rs, fmt.Errorf("%s:%d: column %d (%s): %q is not a number of tickets/s", f.Name(), line, colRate, name(colRate), row[colRate-1])
		}
		if !slices.Contains(rs.consumers, n) {
			rs.consumers = append(rs.consumers, n)
		}
		if rs.rate[mode] == nil {
			rs.rate[mode] = map[int]float64{}
		}
		rs.rate[mode][n] = v
	}
	if len(rs.consumers) == 0 {
		return rs, fmt.Errorf("%s has no runs", f.Name())
	}
	return rs, nil
}

func draw(dir string) error {
	f, err := os.Open(filepath.Join(dir, "throughput.csv"))
	if err != nil {
		return fmt.Errorf("%w (run `make baristas-table` first, it writes it)", err)
	}
	defer f.Close()
	rs, err := readRuns(f)
	if err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = "120 tickets of 20 ms on one partition"
	p.X.Label.Text = "consumers"
	p.Y.Label.Text = "tickets/s"
	w := vg.Points(22)
	for i, mode := range modes {
		var vs plotter.Values
		for _, n := range rs.consumers {
			vs = append(vs, rs.rate[mode][n]) // a mode without the row: no bar
		}
		b, err := plotter.NewBarChart(vs, w)
		if err != nil {
			return err
		}
		b.Color = plotutil.Color(i)
		b.Offset = w * vg.Length(2*i-1) / 2
		p.Add(b)
		p.Legend.Add(map[string]string{"share": "share group", "group": "consumer group"}[mode], b)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	var names []string
	for _, n := range rs.consumers {
		names = append(names, strconv.Itoa(n))
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4 // room for the outer bars
	p.Y.Max *= 1.15                                  // and for the legend above them
	out := filepath.Join(dir, "throughput.png")
	if err := p.Save(6*vg.Inch, 3.5*vg.Inch, out); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "wrote", out)
	return nil
}

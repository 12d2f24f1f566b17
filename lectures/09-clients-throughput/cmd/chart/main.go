// Command chart draws results/compare.png from results/compare.csv (written
// by compare -out): each client's median producer and consumer records/s.
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

// readRuns reads compare.csv: the clients in the order of their first run,
// and each client's producer and consumer records/s, one value per run. A row
// that lacks a column, or a rate that is not a number, is an error naming
// the file, the line and the column.
func readRuns(f *os.File) (order []string, prod, cons map[string][]float64, err error) {
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1 // short rows are reported below, with their column
	header, err := r.Read()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	name := func(col int) string {
		if col <= len(header) {
			return header[col-1]
		}
		return "?"
	}
	prod, cons = map[string][]float64{}, map[string][]float64{}
	for {
		row, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", f.Name(), err)
		}
		line, _ := r.FieldPos(0)
		if len(row) < colConsume {
			return nil, nil, nil, fmt.Errorf("%s:%d: column %d (%s) is missing: the row has %d columns, want at least %d as `make compare` writes them",
				f.Name(), line, len(row)+1, name(len(row)+1), len(row), colConsume)
		}
		var rates [2]float64
		for i, col := range []int{colProduce, colConsume} {
			v, err := strconv.ParseFloat(row[col-1], 64)
			if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, nil, nil, fmt.Errorf("%s:%d: column %d (%s): %q is not a number of records/s", f.Name(), line, col, name(col), row[col-1])
			}
			rates[i] = v
		}
		client := row[colClient-1]
		if !slices.Contains(order, client) {
			order = append(order, client)
		}
		prod[client] = append(prod[client], rates[0])
		cons[client] = append(cons[client], rates[1])
	}
	if len(order) == 0 {
		return nil, nil, nil, fmt.Errorf("%s has no runs", f.Name())
	}
	return order, prod, cons, nil
}

func draw(dir string) error {
	f, err := os.Open(filepath.Join(dir, "compare.csv"))
	if err != nil {
		return fmt.Errorf("%w (run `make compare` first, it writes it)", err)
	}
	defer f.Close()
	order, prod, cons, err := readRuns(f)
	if err != nil {
		return err
	}
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	var pv, cv plotter.Values
	for _, name := range order {
		pv = append(pv, median(prod[name]))
		cv = append(cv, median(cons[name]))
	}
	p := plot.New()
	p.Title.Text = "Brew workload: median records/s"
	p.Y.Label.Text = "records/s"
	w := vg.Points(18)
	pb, err := plotter.NewBarChart(pv, w)
	if err != nil {
		return err
	}
	pb.Color = plotutil.Color(0)
	pb.Offset = -w / 2
	cb, err := plotter.NewBarChart(cv, w)
	if err != nil {
		return err
	}
	cb.Color = plotutil.Color(1)
	cb.Offset = w / 2
	p.Add(pb, cb)
	p.Legend.Add("produce", pb)
	p.Legend.Add("consume", cb)
	p.Legend.Top = true
	p.NominalX(order...)
	out := filepath.Join(dir, "compare.png")
	if err := p.Save(7*vg.Inch, 4*vg.Inch, out); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "wrote", out)
	return nil
}

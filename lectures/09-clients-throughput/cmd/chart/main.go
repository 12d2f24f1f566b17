// Command chart draws results/compare.png from results/compare.csv (written
// by compare -out): each client's median producer and consumer records/s.
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
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
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.NoArgs()
	fc.ExitOnUsageError("chart")
	if err := draw(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		os.Exit(1)
	}
}

func draw(dir string) error {
	f, err := os.Open(filepath.Join(dir, "compare.csv"))
	if err != nil {
		return fmt.Errorf("%w (run `make compare` first, it writes it)", err)
	}
	defer f.Close()
	lines, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return err
	}
	if len(lines) < 2 {
		return fmt.Errorf("%s has no runs", f.Name())
	}
	var order []string
	prod, cons := map[string][]float64{}, map[string][]float64{}
	for _, l := range lines[1:] {
		if !slices.Contains(order, l[0]) {
			order = append(order, l[0])
		}
		p, _ := strconv.ParseFloat(l[3], 64)
		c, _ := strconv.ParseFloat(l[4], 64)
		prod[l[0]] = append(prod[l[0]], p)
		cons[l[0]] = append(cons[l[0]], c)
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

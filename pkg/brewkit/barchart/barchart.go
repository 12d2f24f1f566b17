// Package barchart reads a results CSV that a course program wrote and draws
// its numbers as bars side by side in groups: the charts of lectures 08
// (share group against consumer group, by consumers) and 09 (produce and
// consume, by client).
package barchart

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// CSV is a results file: its header and its rows.
type CSV struct {
	Name   string // the file's path, which every error names
	Header []string
	Rows   []Row
}

// Row is one row of a CSV and its line in the file.
type Row struct {
	csv    *CSV
	Line   int
	Fields []string
}

// Read reads the CSV at path, which the command writer writes (an error
// says to run it when the file is missing). Every row must have at least
// cols columns, and there must be one row at least: a short row is an error
// naming the file, the line and the first missing column.
func Read(path string, cols int, writer string) (*CSV, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w (run `%s` first, it writes it)", err, writer)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1 // short rows are reported below, with their column
	c := &CSV{Name: path}
	if c.Header, err = r.Read(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for {
		fields, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		if len(fields) < cols {
			return nil, fmt.Errorf("%s:%d: column %d (%s) is missing: the row has %d columns, want at least %d as `%s` writes them",
				path, line, len(fields)+1, c.column(len(fields)+1), len(fields), cols, writer)
		}
		c.Rows = append(c.Rows, Row{csv: c, Line: line, Fields: fields})
	}
	if len(c.Rows) == 0 {
		return nil, fmt.Errorf("%s has no runs", path)
	}
	return c, nil
}

// column is the header's name of column col (from 1), or "?".
func (c *CSV) column(col int) string {
	if col <= len(c.Header) {
		return c.Header[col-1]
	}
	return "?"
}

// Field is column col of the row, numbered from 1.
func (r Row) Field(col int) string { return r.Fields[col-1] }

// Errorf is an error about column col of the row: the file, the line, the
// column's number and name, then the message.
func (r Row) Errorf(col int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: column %d (%s): %s", r.csv.Name, r.Line, col, r.csv.column(col), fmt.Sprintf(format, args...))
}

// Rate is column col as a number of unit (records/s, tickets/s): a value
// that is not a finite number of 0 or more is an error saying so.
func (r Row) Rate(col int, unit string) (float64, error) {
	v, err := strconv.ParseFloat(r.Field(col), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, r.Errorf(col, "%q is not a number of %s", r.Field(col), unit)
	}
	return v, nil
}

// Bars is a chart of bars in groups: each group one name on the x axis,
// each series one bar in every group.
type Bars struct {
	Title, XLabel, YLabel string
	Groups                []string
	Series                []Series
}

// Series is one bar of every group, in the order of Bars.Groups, and its
// name in the legend.
type Series struct {
	Name   string
	Values []float64
}

// Save draws the chart into a PNG at path, width by height.
func (b Bars) Save(path string, width, height vg.Length) error {
	p := plot.New()
	p.Title.Text = b.Title
	p.X.Label.Text = b.XLabel
	p.Y.Label.Text = b.YLabel
	w := vg.Points(22)
	n := len(b.Series)
	for i, s := range b.Series {
		bc, err := plotter.NewBarChart(plotter.Values(s.Values), w)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		bc.Color = plotutil.Color(i)
		bc.Offset = w * vg.Length(2*i-(n-1)) / 2 // the group's bars centred on its name
		p.Add(bc)
		p.Legend.Add(s.Name, bc)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.NominalX(b.Groups...)
	p.X.Min, p.X.Max = -0.6, float64(len(b.Groups))-0.4 // room for the outer bars
	p.Y.Max *= 1.15                                     // and for the legend above them
	return p.Save(width, height, path)
}

package rebalancetimeline

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The members' colours: the same member has the same colour in every panel.
var memberColors = map[string]color.Color{
	"a": color.RGBA{R: 0x4c, G: 0x72, B: 0xb0, A: 0xff}, // blue
	"b": color.RGBA{R: 0xdd, G: 0x84, B: 0x52, A: 0xff}, // orange
	"c": color.RGBA{R: 0x55, G: 0xa8, B: 0x68, A: 0xff}, // green
}

// WriteChart draws rows as a picture of partition ownership over time, as a
// PNG: one panel per protocol, one bar per partition, coloured by the member
// that owned it and white while it had no owner; each ownership is outlined,
// so a partition taken away and given back shows a seam even where the gap is
// too short to see. Dashed lines mark when c joined and b was killed.
func WriteChart(w io.Writer, rows []Row) error {
	if len(rows) == 0 {
		return errors.New("no runs to draw")
	}
	var end time.Duration
	simulated := false
	for _, r := range rows {
		end = max(end, r.End)
		simulated = simulated || r.Simulated
	}
	plots := make([][]*plot.Plot, len(rows))
	for i, r := range rows {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s: c joins, %d partitions stop (longest %s); b killed, %d stop (longest %s)",
			r.Protocol.Label(), r.Join.Paused, r.Join.Longest.Round(10*time.Millisecond), r.Kill.Paused, r.Kill.Longest.Round(10*time.Millisecond))
		p.Title.TextStyle.Font.Size = vg.Points(11)
		p.X.Min, p.X.Max = 0, end.Seconds()
		p.X.Tick.Marker = seconds{}
		p.Y.Label.Text = "partition"
		n := partitions(r)
		p.Y.Min, p.Y.Max = -0.5, float64(n)+0.3 // room above the bars for the markers' names
		var ticks []plot.Tick
		for q := range n {
			ticks = append(ticks, plot.Tick{Value: float64(q), Label: fmt.Sprint(q)})
		}
		p.Y.Tick.Marker = plot.ConstantTicks(ticks)
		if i == len(rows)-1 {
			p.X.Label.Text = "seconds since members a and b started"
		}
		p.Add(ownership{row: r, label: p.Y.Tick.Label})
		plots[i] = []*plot.Plot{p}
	}

	width, height := 10*vg.Inch, vg.Length(len(rows))*2.4*vg.Inch+0.5*vg.Inch
	img := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(96))
	dc := draw.New(img)
	head := plots[0][0].Title.TextStyle
	head.Font.Size = vg.Points(13)
	title := "Who owns each partition of one group's topic: members a, b and c (white: no owner)"
	if simulated {
		title += ", embedded simulation"
	}
	dc.FillText(head, vg.Point{X: width / 2, Y: height - vg.Points(8)}, title)
	tiles := draw.Tiles{Rows: len(rows), Cols: 1, PadTop: 0.45 * vg.Inch, PadBottom: vg.Points(6),
		PadLeft: vg.Points(6), PadRight: vg.Points(12), PadY: vg.Points(14)}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		return fmt.Errorf("writing the PNG: %w", err)
	}
	return nil
}

// seconds ticks the time axis: a labelled tick every 5 s, a small one every
// second.
type seconds struct{}

func (seconds) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for s := math.Ceil(lo); s <= hi; s++ {
		t := plot.Tick{Value: s}
		if int(s)%5 == 0 {
			t.Label = fmt.Sprint(s)
		}
		ts = append(ts, t)
	}
	return ts
}

// partitions is how many partitions the run's topic has, as its
// ownerships tell.
func partitions(r Row) int {
	n := 0
	for _, s := range r.Owners {
		n = max(n, int(s.Partition)+1)
	}
	return n
}

// ownership draws one run's ownerships and its two moments.
type ownership struct {
	row   Row
	label draw.TextStyle // the style of the axis' tick labels
}

func (o ownership) Plot(c draw.Canvas, p *plot.Plot) {
	x, y := p.Transforms(&c)
	edge := draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)}
	name := o.label
	name.Color = color.White
	name.XAlign, name.YAlign = draw.XCenter, draw.YCenter
	for _, s := range o.row.Owners {
		x0, x1 := x(s.From.Seconds()), x(s.To.Seconds())
		y0, y1 := y(float64(s.Partition)-0.35), y(float64(s.Partition)+0.35)
		box := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
		fill, ok := memberColors[s.Member]
		if !ok {
			fill = color.Gray{Y: 0x80}
		}
		c.FillPolygon(fill, c.ClipPolygonXY(box))
		c.StrokeLines(edge, c.ClipLinesXY(append(box, box[0]))...)
		if x1-x0 > name.Width(s.Member)+vg.Points(4) {
			c.FillText(name, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, s.Member)
		}
	}
	mark := draw.LineStyle{Color: color.Black, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	text := o.label
	text.XAlign, text.YAlign = draw.XLeft, draw.YTop
	for _, m := range []struct {
		at   time.Duration
		what string
	}{{o.row.JoinAt, "c joins"}, {o.row.KillAt, "b killed (SIGKILL)"}} {
		at := x(m.at.Seconds())
		c.StrokeLine2(mark, at, c.Min.Y, at, c.Max.Y)
		c.FillText(text, vg.Point{X: at + vg.Points(3), Y: c.Max.Y - vg.Points(1)}, m.what)
	}
}

func (o ownership) DataRange() (xmin, xmax, ymin, ymax float64) {
	return 0, o.row.End.Seconds(), -0.5, float64(partitions(o.row)) - 0.5
}

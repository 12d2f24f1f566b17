// Package timeline draws a failover drill as a picture: above, which node
// leads the drilled partition and which replicas are in its ISR, second by
// second; below, how many orders a second the brokers acknowledged; and the
// drill's steps as dashed lines across both.
package timeline

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/brew-course/kafka/lectures/04-replication-isr/failover"
)

// The picture's size.
const (
	Width  = 9 * vg.Inch
	Height = 6 * vg.Inch
)

var (
	leaderColor = color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff} // orange
	isrColor    = color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff} // green
	ackColor    = color.RGBA{R: 0x31, G: 0x5a, B: 0xa8, A: 0xff} // blue
	eventColor  = color.Gray{Y: 0x88}
)

// Nodes are the rows of the upper panel.
var Nodes = []int32{1, 2, 3}

// Draw writes rep's timeline as a PNG to w.
func Draw(w io.Writer, rep failover.Report) error {
	if len(rep.Timeline) < 2 {
		return fmt.Errorf("the report has %d timeline samples, want at least 2: run the drill with this version of failover", len(rep.Timeline))
	}
	// A little room on the right for the last event's label.
	end := secs(rep.Timeline[len(rep.Timeline)-1].At) * 1.06
	top, err := replicas(rep, end)
	if err != nil {
		return err
	}
	bottom, err := acks(rep, end)
	if err != nil {
		return err
	}
	img := vgimg.New(Width, Height)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(12), PadY: vg.Points(8)}
	plots := [][]*plot.Plot{{top}, {bottom}}
	canvases := plot.Align(plots, tiles, dc)
	top.Draw(canvases[0][0])
	bottom.Draw(canvases[1][0])
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		return fmt.Errorf("writing the PNG: %w", err)
	}
	return nil
}

// replicas is the upper panel: one row per node, a thick line while the
// node is in the ISR, orange while it leads.
func replicas(rep failover.Report, end float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Failover drill, partition %d: leader, ISR and acknowledged writes", rep.Partition)
	p.X.Min, p.X.Max = 0, end
	p.X.Tick.Marker = every5s
	p.Y.Min, p.Y.Max = -1.1, float64(len(Nodes))+0.9
	labels := make([]string, len(Nodes))
	for i, n := range Nodes {
		labels[i] = fmt.Sprintf("node %d", n)
	}
	p.NominalY(labels...)
	p.Legend.Top, p.Legend.Left = false, true
	p.Legend.XOffs = vg.Points(6)
	var isrLine, leaderLine *plotter.Line
	for row, n := range Nodes {
		for _, seg := range segments(rep.Timeline, n) {
			l, err := plotter.NewLine(plotter.XYs{{X: seg.from, Y: float64(row)}, {X: seg.to, Y: float64(row)}})
			if err != nil {
				return nil, err
			}
			l.Width = vg.Points(9)
			l.Color = isrColor
			if seg.leader {
				l.Color = leaderColor
				leaderLine = l
			} else {
				isrLine = l
			}
			p.Add(l)
		}
	}
	if leaderLine != nil {
		p.Legend.Add("leader", leaderLine)
	}
	if isrLine != nil {
		p.Legend.Add("in the ISR, following", isrLine)
	}
	if err := events(p, rep.Events, true); err != nil {
		return nil, err
	}
	return p, nil
}

// acks is the lower panel: acknowledged acks=all orders per second.
func acks(rep failover.Report, end float64) (*plot.Plot, error) {
	p := plot.New()
	p.X.Min, p.X.Max = 0, end
	p.X.Tick.Marker = every5s
	p.X.Label.Text = "seconds since the drill began"
	p.Y.Label.Text = "acknowledged orders/s"
	p.Y.Min = 0
	xys := Rates(rep.Timeline)
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.Color, l.Width = ackColor, vg.Points(1.5)
	p.Add(l)
	top := 0.0
	for _, xy := range xys {
		top = max(top, xy.Y)
	}
	p.Y.Max = top * 1.1
	if err := events(p, rep.Events, false); err != nil {
		return nil, err
	}
	return p, nil
}

// segment is a stretch of time in which a node stays in the ISR, leading or not.
type segment struct {
	from, to float64
	leader   bool
}

// segments returns the stretches in which node n is in the ISR; each sample
// holds until the next one.
func segments(samples []failover.Sample, n int32) []segment {
	var out []segment
	for i := 0; i+1 < len(samples); i++ {
		s := samples[i]
		if !slices.Contains(s.ISR, n) {
			continue
		}
		seg := segment{from: secs(s.At), to: secs(samples[i+1].At), leader: s.Leader == n}
		if k := len(out) - 1; k >= 0 && out[k].to == seg.from && out[k].leader == seg.leader {
			out[k].to = seg.to
			continue
		}
		out = append(out, seg)
	}
	return out
}

// Rates turns the samples' running count of acknowledged orders into
// orders per second, one point per sample interval, at its midpoint.
func Rates(samples []failover.Sample) plotter.XYs {
	var xys plotter.XYs
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		dt := secs(b.At - a.At)
		if dt <= 0 {
			continue
		}
		xys = append(xys, plotter.XY{X: (secs(a.At) + secs(b.At)) / 2, Y: float64(b.Acked-a.Acked) / dt})
	}
	return xys
}

// events draws a dashed line at each event; with labelled, its name too,
// staggered over three heights above the nodes so that close events stay
// readable.
func events(p *plot.Plot, evs []failover.Event, labelled bool) error {
	var xyl plotter.XYLabels
	for i, e := range evs {
		x := secs(e.At)
		v, err := plotter.NewLine(plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}})
		if err != nil {
			return err
		}
		v.Color, v.Width, v.Dashes = eventColor, vg.Points(0.8), []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(v)
		xyl.XYs = append(xyl.XYs, plotter.XY{X: x, Y: float64(len(Nodes)) - 0.45 + 0.42*float64(i%3)})
		xyl.Labels = append(xyl.Labels, " "+e.What)
	}
	if !labelled || len(evs) == 0 {
		return nil
	}
	ls, err := plotter.NewLabels(xyl)
	if err != nil {
		return err
	}
	for i := range ls.TextStyle {
		ls.TextStyle[i].Font.Size = vg.Points(8)
	}
	p.Add(ls)
	return nil
}

func secs(d time.Duration) float64 { return d.Seconds() }

// every5s puts a labelled tick every 5 seconds and a small one every second.
var every5s = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for s := math.Ceil(lo); s <= hi; s++ {
		t := plot.Tick{Value: s}
		if int(s)%5 == 0 {
			t.Label = fmt.Sprintf("%.0f", s)
		}
		ts = append(ts, t)
	}
	return ts
})

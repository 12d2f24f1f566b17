// Package lagchart draws a fire drill as a picture: the drill's group lag in
// records over the drill, as Prometheus collected it from the lag exporter,
// each step's fault and fix as dashed lines, and a dot where each of the
// step's alerts fired.
package lagchart

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/brew-course/kafka/lectures/13-observability/firedrill"
)

// The picture's size.
const (
	Width  = 10 * vg.Inch
	Height = 5 * vg.Inch
)

var (
	lagColor   = color.RGBA{R: 0x31, G: 0x5a, B: 0xa8, A: 0xff} // blue
	faultColor = color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff} // orange
	fixColor   = color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff} // green
	alertColor = color.RGBA{R: 0xc0, G: 0x1c, B: 0x28, A: 0xff} // red
)

// Draw writes rep's lag over the drill as a PNG to w.
func Draw(w io.Writer, rep *firedrill.Report) error {
	if len(rep.Lag) < 2 {
		return fmt.Errorf("the report has %d lag samples, want at least 2: save a whole drill (fire-drill -save FILE)", len(rep.Lag))
	}
	at := func(p firedrill.Point) float64 { return p.At.Sub(rep.Started).Seconds() }
	p := plot.New()
	p.Title.Text = "Fire drill: the kitchen's lag (records) and when each alert fired"
	p.X.Label.Text = "seconds since the drill began"
	p.Y.Label.Text = "lag, records"
	p.Y.Min = 0
	var xys plotter.XYs
	top := 1.0
	for _, pt := range rep.Lag {
		xys = append(xys, plotter.XY{X: at(pt), Y: pt.Value})
		top = max(top, pt.Value)
	}
	// Room above the lag for the alerts' names.
	p.Y.Max = top * 1.9
	p.X.Min, p.X.Max = 0, xys[len(xys)-1].X*1.02
	p.X.Tick.Marker = every30s{}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.Color, l.Width = lagColor, vg.Points(1.5)
	p.Add(l)
	p.Legend.Add("group lag", l)
	p.Legend.Top = true

	if err := addSteps(p, rep); err != nil {
		return err
	}
	img := vgimg.New(Width, Height)
	p.Draw(draw.New(img))
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		return fmt.Errorf("writing the PNG: %w", err)
	}
	return nil
}

// addSteps marks each step's fault and fix with a dashed line, and each
// alert that fired with a dot and its name.
func addSteps(p *plot.Plot, rep *firedrill.Report) error {
	var fired plotter.XYs
	var labels []string
	for i, s := range rep.Steps {
		fault := s.FaultAt.Sub(rep.Started).Seconds()
		fix := s.FixAt.Sub(rep.Started).Seconds()
		for _, v := range []struct {
			x float64
			c color.Color
		}{{fault, faultColor}, {fix, fixColor}} {
			vl, err := plotter.NewLine(plotter.XYs{{X: v.x, Y: 0}, {X: v.x, Y: p.Y.Max}})
			if err != nil {
				return err
			}
			vl.Color, vl.Dashes = v.c, []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(vl)
			if i == 0 {
				if v.c == faultColor {
					p.Legend.Add("fault", vl)
				} else {
					p.Legend.Add("fix", vl)
				}
			}
		}
		lbl, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: fault, Y: p.Y.Max * 0.97}}, Labels: []string{" " + s.Step.Name}})
		if err != nil {
			return err
		}
		p.Add(lbl)
		for j, tm := range s.Timings {
			if !tm.Fired() {
				continue
			}
			fired = append(fired, plotter.XY{X: fault + tm.Firing.Seconds(), Y: p.Y.Max * (0.84 - 0.07*float64(j))})
			labels = append(labels, " "+tm.Expect.Alert)
		}
	}
	if len(fired) > 0 {
		sc, err := plotter.NewScatter(fired)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color, sc.GlyphStyle.Radius, sc.GlyphStyle.Shape = alertColor, vg.Points(3), draw.CircleGlyph{}
		p.Add(sc)
		p.Legend.Add("alert fired", sc)
		names, err := plotter.NewLabels(plotter.XYLabels{XYs: fired, Labels: labels})
		if err != nil {
			return err
		}
		for i := range names.TextStyle {
			names.TextStyle[i].Font.Size = vg.Points(7)
		}
		p.Add(names)
	}
	return nil
}

// every30s puts a tick every 30 seconds, labelled, and one every 10 unlabelled.
type every30s struct{}

func (every30s) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for x := 0.0; x <= max; x += 10 {
		if x < min {
			continue
		}
		t := plot.Tick{Value: x}
		if int(x)%30 == 0 {
			t.Label = fmt.Sprintf("%.0f", x)
		}
		ts = append(ts, t)
	}
	return ts
}

package lagchart

import (
	"bytes"
	"image/png"
	"testing"
	"time"

	"github.com/brew-course/kafka/lectures/13-observability/firedrill"
)

// A drill's report draws as a PNG of the picture's size; a report without
// lag samples is refused with what to do.
func TestDrawsADrill(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	rep := &firedrill.Report{Started: start}
	for i := range 60 {
		lag := 2.0
		if i >= 10 && i < 20 {
			lag = float64(i-9) * 100
		}
		rep.Lag = append(rep.Lag, firedrill.Point{At: start.Add(time.Duration(i) * 5 * time.Second), Value: lag})
	}
	rep.Steps = []firedrill.StepResult{{
		Step:    firedrill.Steps("g")[0],
		FaultAt: start.Add(50 * time.Second),
		FixAt:   start.Add(100 * time.Second),
		Timings: []firedrill.Timing{{Expect: firedrill.Expect{Alert: "BrewGroupNoMembers"}, Firing: 20 * time.Second}},
	}}
	var buf bytes.Buffer
	if err := Draw(&buf, rep); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() < 500 || b.Dy() < 250 {
		t.Errorf("the picture is %dx%d", b.Dx(), b.Dy())
	}
	if err := Draw(&buf, &firedrill.Report{}); err == nil {
		t.Error("a report without lag samples drew")
	}
}

package timeline_test

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/04-replication-isr/failover"
	"github.com/brew-course/kafka/lectures/04-replication-isr/timeline"
)

// The measured drill the README shows, results/drill.json, draws as a PNG
// of the picture's size.
func TestDrawsTheMeasuredDrill(t *testing.T) {
	b, err := os.ReadFile("../results/drill.json")
	require.NoError(t, err)
	var rep failover.Report
	require.NoError(t, json.Unmarshal(b, &rep))
	require.NotEmpty(t, rep.Timeline)
	var out bytes.Buffer
	require.NoError(t, timeline.Draw(&out, rep))
	img, err := png.Decode(&out)
	require.NoError(t, err)
	require.Equal(t, int(timeline.Width.Dots(96)), img.Bounds().Dx())
	require.Equal(t, int(timeline.Height.Dots(96)), img.Bounds().Dy())
}

// A report without a timeline (an older failover's) is an error, not an
// empty picture.
func TestNoTimelineIsAnError(t *testing.T) {
	var out bytes.Buffer
	err := timeline.Draw(&out, failover.Report{Timeline: []failover.Sample{{}}})
	require.ErrorContains(t, err, "1 timeline samples")
	require.Zero(t, out.Len())
}

// Acknowledged orders per second come from the running count between samples.
func TestRates(t *testing.T) {
	xys := timeline.Rates([]failover.Sample{
		{At: 0, Acked: 0},
		{At: 500 * time.Millisecond, Acked: 100},
		{At: time.Second, Acked: 100},
	})
	require.Len(t, xys, 2)
	require.InDelta(t, 0.25, xys[0].X, 1e-9)
	require.InDelta(t, 200, xys[0].Y, 1e-9)
	require.InDelta(t, 0, xys[1].Y, 1e-9)
}

package sweep_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/09-clients-throughput/sweep"
)

// A small sweep fills both tables; every codec but none shrinks the batches.
func TestSweepFillsBothTables(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := sweep.Defaults
	c.Base.Records = 3000
	c.Lingers = []time.Duration{0, 5 * time.Millisecond}
	c.Batches = []int{16 << 10, 256 << 10}
	c.Codecs = []string{"none", "zstd"}
	r, err := sweep.Run(ctx, env.Config, c, func(s string) { t.Log(s) })
	require.NoError(t, err)
	require.Len(t, r.Batching, 2)
	require.Len(t, r.Batching[0], 2)
	require.Len(t, r.Codecs, 2)
	require.InDelta(t, 1.0, r.Codecs[0].Ratio, 0.05, "none: batches go out as they are")
	require.Greater(t, r.Codecs[1].Ratio, 1.5, "zstd shrinks JSON orders")
	var b strings.Builder
	r.Print(&b)
	t.Log("\n" + b.String())
}

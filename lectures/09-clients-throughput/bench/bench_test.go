package bench_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/09-clients-throughput/bench"
)

// Two producers and two consumers in parallel move every record, and the
// figures add up: rates, latencies in order, CPU measured, a compression
// ratio above 1 for JSON orders with lz4.
func TestBenchMovesEveryRecordReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := bench.Defaults
	c.Records, c.Producers, c.Consumers = 20_000, 2, 2
	r, err := bench.Run(ctx, env.Config, c)
	require.NoError(t, err)
	t.Logf("%s\nproduce %+v\nconsume %+v\nratio %.2f", c.Effective(), r.Produce, r.Consume, r.Ratio)
	require.Equal(t, c.Records, r.Produce.Records)
	require.Equal(t, c.Records, r.Consume.Records, "every record read back, none more")
	require.Positive(t, r.Produce.PerSec)
	require.Positive(t, r.Consume.PerSec)
	require.LessOrEqual(t, r.Produce.P50, r.Produce.P99)
	require.LessOrEqual(t, r.Produce.P99, r.Produce.Max)
	require.Positive(t, r.Produce.CPU)
	require.Greater(t, r.Ratio, 1.0, "JSON orders compress with lz4")
	var b strings.Builder
	r.Print(&b)
	brewtest.MatchesReadme(t, "../README.md", "bench", b.String())
}

// Settings a client cannot run with are refused before anything runs.
func TestBenchRefusesImpossibleSettings(t *testing.T) {
	c := bench.Defaults
	c.Acks = "1"
	require.ErrorContains(t, c.Check(), "idempotence needs acks=all")
	c = bench.Defaults
	c.Compression = "brotli"
	require.ErrorContains(t, c.Check(), "unknown compression")
	c = bench.Defaults
	c.MaxInflight = 10
	require.ErrorContains(t, c.Check(), "keeps 5 requests in flight")
}

// The end-to-end phase reads every record it wrote at a fixed rate, and the
// latency from the timestamp in the record is measured.
func TestEndToEndLatency(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := bench.Defaults
	c.Records, c.E2ERate, c.E2EFor = 1000, 500, 2*time.Second
	r, err := bench.Run(ctx, env.Config, c)
	require.NoError(t, err)
	require.NotNil(t, r.EndToEnd)
	t.Logf("end to end %+v", *r.EndToEnd)
	require.Equal(t, 1000, r.EndToEnd.Records)
	require.Positive(t, r.EndToEnd.P50)
	require.LessOrEqual(t, r.EndToEnd.P50, r.EndToEnd.P99)
	require.Less(t, r.EndToEnd.P99, 5*time.Second, "at 500 records/s nothing waits long")
}

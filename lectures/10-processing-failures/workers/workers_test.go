package workers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/lectures/10-processing-failures/workers"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// Workers per partition and per key book several times faster than one
// loop, keep every order's events in order and commit everything they
// booked; a goroutine per record is faster still and books events out of
// order.
func TestWorkersAreFasterAndKeepOrderReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	run, addr, err := partner.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { run.Close() })
	o := workers.Defaults
	o.Topic = env.FreshTopic(t, "courier-workers", 6)
	o.Run, o.Partner = "workers-test", partner.NewClient(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rows, err := workers.Table(ctx, env.Config, o, func(s string) { t.Log(s) })
	require.NoError(t, err)
	require.Len(t, rows, 4)

	byMode := map[workers.Mode]workers.Row{}
	for _, r := range rows {
		byMode[r.Mode] = r
		require.Zero(t, r.Uncommitted, "%s: every booked record committed", r.Mode)
	}
	require.Equal(t, 6, byMode[workers.Partition].Goroutines, "a goroutine per partition, up to 6")
	for _, m := range []workers.Mode{workers.Plain, workers.Partition, workers.Key} {
		require.Zero(t, byMode[m].OutOfOrder, "%s keeps each order's events in order", m)
	}
	// Partition mode is as fast as its polls let it be: a poll brings the
	// partitions whose fetch responses have arrived (one broker's, or all
	// of them), and waits for its longest. Which ones is up to the network
	// and the scheduler, so the claim is about the bound the polls set, not
	// a fixed speedup.
	p := byMode[workers.Partition]
	bound := float64(o.Orders) / float64(p.Critical)
	t.Logf("partition: %d polls, the longest partition of each summed to %d of %d events: %.1fx at most, %.1fx measured", p.Polls, p.Critical, o.Orders, bound, p.Speedup)
	require.Less(t, p.Critical, o.Orders, "a poll brought partitions side by side")
	require.GreaterOrEqual(t, p.Elapsed, time.Duration(p.Critical)*o.Latency, "each poll waits for its longest partition")
	require.Greater(t, p.Speedup, 1.0, "partitions side by side beat one loop")
	require.Greater(t, byMode[workers.Key].PerSecond, byMode[workers.Partition].PerSecond, "16 workers beat 6 partitions")
	// The speed-ups are a claim about waiting on the partner: 20 ms a
	// booking against well under a millisecond of CPU. Under the race
	// detector a booking costs several milliseconds of CPU, and 16 workers
	// ask for more than two busy cores give (key mode measured 4.2x there,
	// in make check beside other packages): what that measures is the
	// detector. make test and the real tier, built without it, hold them.
	if brewtest.RaceBuild {
		t.Logf("race detector: the speed-ups (key %.1fx, partition %.1fx of %.1fx) are held without it", byMode[workers.Key].Speedup, p.Speedup, bound)
	} else {
		require.GreaterOrEqual(t, p.Speedup, 0.75*bound, "partition mode reaches the speedup its polls allow (%.1fx)", bound)
		require.GreaterOrEqual(t, byMode[workers.Key].Speedup, 5.0, "a worker per key books several times faster than one loop")
	}
	require.Positive(t, byMode[workers.Record].OutOfOrder, "a goroutine per record loses the order")

	var b strings.Builder
	workers.Print(&b, o, rows)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "workers", b.String())
}

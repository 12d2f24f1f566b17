package backpressure_test

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/10-processing-failures/backpressure"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// Through a rush hour with a slow partner, the bounded courier pauses
// fetching while its queue is full: the backlog waits in Kafka as lag, which
// rises and falls, its memory stays under the README's bound and its queue
// under its size; the unbounded courier holds the backlog in memory, several
// times as much. Neither loses its partitions, and each books every order
// once.
func TestBoundedQueueKeepsMemoryFlatReadme(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RSS is read from /proc/self/status: Linux only")
	}
	env := brewtest.Cluster(t)
	run, addr, err := partner.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { run.Close() })
	o := backpressure.Defaults
	o.Topic = env.FreshTopic(t, "courier-bp", 6)
	o.Run, o.Partner, o.PartnerAddr = "bp-test", partner.NewClient(addr), addr
	o.Courier = []string{brewtest.BuildCmdAt(t, "../cmd/backpressure"), "courier"}
	o.Progress = func(s string) { t.Log(s) }
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rs, err := backpressure.Run(ctx, env.Config, o)
	require.NoError(t, err)
	require.Len(t, rs, 2)
	bounded, unbounded := rs[0], rs[1]

	for _, r := range rs {
		require.Equal(t, o.Orders, r.Booked, "%s: every order booked", r.Mode)
		require.Zero(t, r.BookedTwice, "%s: none twice", r.Mode)
		require.Zero(t, r.Revoked, "%s: no rebalance", r.Mode)
		// While the partner is slow (the first 4 s) 16 workers book at
		// most 80 orders a second: what comes in is lag.
		slow := r.Timeline[int(o.Slow/time.Second)-2] // at 3 s
		require.Greater(t, slow.Written, 1000, "%s: orders came in", r.Mode)
		require.Greater(t, slow.Lag, int64(slow.Written-1000), "%s: the lag rose while the partner was slow", r.Mode)
		// Run ends once the lag is back to 0, every order booked.
	}
	require.Positive(t, bounded.MaxQueue)
	require.LessOrEqual(t, bounded.MaxQueue, o.Queue, "the bounded queue never holds more than its size")
	require.Positive(t, bounded.Pauses)
	// It paused at some second of the slow window: when depends on how
	// fast the queue fills (later under -race or on a loaded machine).
	slowWindow := bounded.Timeline[:min(len(bounded.Timeline), int(o.Slow/time.Second))]
	require.True(t, slices.ContainsFunc(slowWindow, func(p backpressure.Point) bool { return p.Paused }),
		"paused while the partner is slow")
	require.Less(t, bounded.PeakRSS, int64(backpressure.RSSBound), "the README's bound")
	require.Greater(t, unbounded.MaxQueue, o.Orders/2, "the unbounded queue holds the backlog")
	require.Zero(t, unbounded.Pauses)
	require.Greater(t, float64(unbounded.PeakRSS), 3*float64(bounded.PeakRSS), "and the memory for it")

	var b strings.Builder
	backpressure.Print(&b, o, rs)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "backpressure", strings.ReplaceAll(b.String(), o.Topic, backpressure.Rush.Name))
}

package naive_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/10-processing-failures/naive"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

func partnerFor(t *testing.T) *partner.Client {
	t.Helper()
	r, addr, err := partner.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return partner.NewClient(addr)
}

// Through an outage the naive loop hammers the partner and books nothing on
// any partition; after it, it books until the poison order and retries that
// one forever, while the group, which the loop never leaves, sees nothing
// wrong.
func TestNaiveLoopStallsEveryPartitionAndHangsOnThePoisonReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	o := naive.Defaults
	o.Topic = env.FreshTopic(t, "courier-naive", 6)
	o.Run = "naive-test" // the README's 5 s outage and 5 s after it
	o.Partner = partnerFor(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := naive.Run(ctx, env.Config, o)
	require.NoError(t, err)

	require.Zero(t, r.BookedInOutage)
	require.Greater(t, r.CallsInOutage, int64(10), "it retried every 100 ms")
	require.Equal(t, int64(o.Orders), r.LagInOutage, "nothing committed while the partner was down")
	require.Equal(t, 6, r.StalledPartitions, "one failing record stalls every partition of the consumer")
	require.Positive(t, r.Booked)
	require.Less(t, r.Booked, int64(o.Orders), "it never gets past the poison order")
	require.Positive(t, r.Lag)
	require.Contains(t, r.StuckError, "not an order")
	require.Equal(t, 1, r.Members)
	require.Zero(t, r.Revoked, "no rebalance: the group does not notice")

	var b strings.Builder
	naive.Print(&b, o, r)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "naive", strings.ReplaceAll(b.String(), o.Topic, "brew.orders.v1"))
}

// A courier that crashes on the poison order crash-loops on it: every restart
// gets the same record, the committed offset stays below it, and each
// restart books again what the crashed batch had booked.
func TestCrashLoopOnThePoisonReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	o := naive.Defaults
	o.Topic = env.FreshTopic(t, "courier-crash", 6)
	o.Run, o.Outage, o.Restarts = "crash-test", 0, 3
	o.Partner = partnerFor(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := naive.Run(ctx, env.Config, o)
	require.NoError(t, err)

	require.Len(t, r.Crashes, 3)
	for _, c := range r.Crashes {
		require.Equal(t, r.Crashes[0].Partition, c.Partition)
		require.Equal(t, r.Crashes[0].Offset, c.Offset)
		require.LessOrEqual(t, c.Committed, c.Offset, "the commit never passes the poison")
	}
	require.Positive(t, r.BookedTwice, "each restart books again what the crashed batch booked")

	var b strings.Builder
	naive.Print(&b, o, r)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "naive-crash", strings.ReplaceAll(b.String(), o.Topic, "brew.orders.v1"))
}

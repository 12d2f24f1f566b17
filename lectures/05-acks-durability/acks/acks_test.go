package acks_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/05-acks-durability/acks"
)

// The three levels each write the whole workload; the table has their rows.
func TestBenchWritesWithEveryLevelReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := acks.Config{Records: 2000, Size: 512, Partitions: 6}
	ms, err := acks.Bench(ctx, env.Config, c, func(s string) { t.Log(s) })
	require.NoError(t, err)
	require.Len(t, ms, 3)
	for _, m := range ms {
		require.Zero(t, m.Errors, "acks=%s", m.Acks)
		require.Positive(t, m.PerSecond)
		require.LessOrEqual(t, m.P50, m.P99)
		require.LessOrEqual(t, m.P99, m.Max)
		t.Logf("acks=%-3s %8.0f records/s  p50 %s  p99 %s  max %s", m.Acks, m.PerSecond, m.P50, m.P99, m.Max)
	}
	var b strings.Builder
	acks.PrintBench(&b, ms)
	brewtest.MatchesReadme(t, "../README.md", "acks", b.String())
}

// min.insync.replicas=3 with one replica's node down: acks=all is refused with
// NOT_ENOUGH_REPLICAS, acks=1 still writes.
func TestMinISRRefusesAcksAllReadmeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out strings.Builder
	r, err := acks.Refuse(ctx, env.Config, env.NodeControl(t), func(s string) {
		t.Log(s)
		out.WriteString(s + "\n")
	})
	require.NoError(t, err)
	require.Contains(t, r.AcksAll, "NOT_ENOUGH_REPLICAS")
	require.Contains(t, r.AcksOne, "written at offset")
	require.Contains(t, r.AcksAll2, "written at offset", "with min ISR 2, acks=all writes with one node down")
	brewtest.MatchesReadme(t, "../README.md", "acks-refuse", brewtest.WithoutSimNote(out.String()))
}

package scale_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/14-stream-processing/scale"
)

// Three instances share the orders by partition: each counts only the
// partitions the group gave it, partitions move from a to b when b joins,
// b (cold) restores its partitions' state from the changelog, c (a
// standby) reads less at takeover than it did warming up, and together they
// count every window as the batch recount does.
func TestScaleReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := scale.Defaults
	c.Dir = t.TempDir()
	c.Progress = func(s string) { t.Log(s) }
	start := time.Now()
	r, err := scale.Run(ctx, env.Config, c)
	require.NoError(t, err)
	var out bytes.Buffer
	r.Print(&out)
	t.Logf("in %s:\n%s", time.Since(start).Round(time.Millisecond), out.String())
	brewtest.MatchesReadme(t, "../README.md", "scale", out.String())

	require.Len(t, r.Phases, scale.Chunks)
	require.Len(t, r.Instances, 3)
	var all []int32
	for _, i := range r.Instances {
		require.NotEmpty(t, i.Stats.Partitions, "instance %s counted nothing", i.ID)
		require.Subset(t, r.Owned(i.ID), i.Stats.Partitions, "instance %s counted only partitions it got", i.ID)
		for _, p := range i.Stats.Partitions {
			if !slices.Contains(all, p) {
				all = append(all, p)
			}
		}
		for _, rs := range i.Stats.Restores {
			require.Subset(t, r.Owned(i.ID), rs.Partitions, "instance %s restored only partitions it got", i.ID)
		}
	}
	slices.Sort(all)
	require.Equal(t, []int32{0, 1, 2, 3, 4, 5}, all, "together they cover every partition")
	for _, ph := range r.Phases {
		require.Len(t, ph.Owners, ph.Chunk, "chunk %d: one instance more per chunk", ph.Chunk)
	}

	// b's partitions were a's before b joined; a no longer owns them.
	a, _ := r.Instance("a")
	b, _ := r.Instance("b")
	cc, _ := r.Instance("c")
	require.Len(t, r.Phases[0].Owners["a"], 6, "a alone owns every partition")
	require.Less(t, len(r.Phases[1].Owners["a"]), 6, "partitions moved away from a once b joined")
	for _, p := range r.Phases[1].Owners["b"] {
		require.NotContains(t, r.Phases[1].Owners["a"], p)
	}
	require.Equal(t, []int32{0, 1, 2, 3, 4, 5}, a.Stats.Partitions, "a counted chunk 1 alone")

	// b, cold, read its partitions' state from the changelog.
	bRead, _ := b.Takeover()
	require.Positive(t, bRead, "b (cold) restored its partitions' state")
	require.False(t, b.Warm)
	require.Zero(t, b.WarmUp.Records)

	// c, a standby, read the whole changelog before joining and less at takeover.
	require.True(t, cc.Warm)
	require.Len(t, cc.WarmUp.Partitions, 6, "the standby's warm-up restored every partition")
	require.Positive(t, cc.WarmUp.Records)
	cRead, _ := cc.Takeover()
	require.Less(t, cRead, cc.WarmUp.Records, "the standby's takeover read less than its warm-up")
	require.Less(t, cRead, bRead, "the standby read less at takeover than cold b")

	require.Equal(t, c.Plan.Orders, r.Written.Orders)
	require.Equal(t, r.Written.Orders, r.Counted(), "every order counted once by one instance")
	require.Equal(t, r.Written.Orders, r.Judged)
	require.Equal(t, r.Written.Meant, r.Recount)
	require.Zero(t, r.Differ, "windows that differ from the recount")
	require.Zero(t, r.Extra)
	require.True(t, r.Exact())
	require.Contains(t, out.String(), "EXACT: every window equals the recount")
}

package analytics_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/14-stream-processing/analytics"
	"github.com/brew-course/kafka/lectures/14-stream-processing/recount"
	"github.com/brew-course/kafka/lectures/14-stream-processing/store"
	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
	"github.com/brew-course/kafka/lectures/14-stream-processing/window"
)

// fresh is a run's config on topics of its own: orders written by the till,
// the changelog and the output created as the service creates them.
func fresh(t *testing.T, env *brewtest.Env, plan till.Plan) (analytics.Config, till.Written) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := analytics.Defaults
	c.In = env.FreshTopic(t, "brew.stream.orders.", 6)
	c.Changelog = c.In + "-changelog"
	c.Out = c.In + "-revenue"
	c.Group = c.In + ".analytics"
	c.Dir = t.TempDir() + "/a"
	c.Idle = 2 * time.Second
	adm := env.Admin(t)
	require.NoError(t, analytics.Topics(ctx, adm, c))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		adm.DeleteTopics(ctx, c.Changelog, c.Out) //nolint:errcheck // leftovers are harmless
		analytics.DeleteGroup(ctx, adm, c, c.ID)  //nolint:errcheck // and so is the group
	})
	w, err := till.Write(ctx, env.Config, c.In, 6, plan)
	require.NoError(t, err)
	return c, w
}

// One instance counts every window as the batch recount does: the orders
// it took and the ones it dropped as too late are the till's, exactly, and
// the changelog holds the same state as its local store.
func TestOneInstanceMatchesRecount(t *testing.T) {
	env := brewtest.Cluster(t)
	c, w := fresh(t, env, till.Defaults)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := analytics.Run(ctx, env.Config, c, func(s string) { t.Log(s) })
	require.NoError(t, err)
	require.Equal(t, w.Orders, st.Orders)
	require.Equal(t, w.Meant, st.Counts, "in order, out of order and too late as the till meant them")

	adm := env.Admin(t)
	want, err := recount.Run(ctx, env.Config, adm, c.In, c.Window)
	require.NoError(t, err)
	require.Equal(t, w.Meant, want.Counts)
	got, parts, err := store.Materialized(ctx, env.Config, adm, c.Changelog)
	require.NoError(t, err)
	differ, extra := window.Diff(want.Totals, got)
	require.Empty(t, differ, "windows that differ from the recount")
	require.Zero(t, extra)
	var sum window.Counts
	for p, pc := range parts {
		require.Equal(t, want.Parts[p], pc.Counts, "partition %d", p)
		sum.Records += pc.Counts.Records
	}
	require.Equal(t, w.Orders, sum.Records)

	db, err := store.Open(c.Dir)
	require.NoError(t, err)
	defer db.Close()
	local, _, err := db.Totals()
	require.NoError(t, err)
	differ, _ = window.Diff(want.Totals, local)
	require.Empty(t, differ, "the local store differs from the recount")
}

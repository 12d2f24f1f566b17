package rebalancetimeline_test

import (
	"bytes"
	"context"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
	"github.com/brew-course/kafka/lectures/06-consumer-groups/rebalancetimeline"
)

// A third member joins, then a member is killed (a real process, SIGKILL).
// Eager stops all six partitions both times; cooperative-sticky and the
// consumer protocol stop only the two that move. Nothing is left unprocessed.
func TestRebalanceTimelineReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	c := rebalancetimeline.Defaults
	c.Member = []string{brewtest.BuildCmdAt(t, "../cmd/rebalance-timeline"), "member"}
	// On the simulation the three protocols run side by side (55 s in turn).
	c.Together = env.Simulated
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rows, err := rebalancetimeline.Run(ctx, env.Config, c, groups.Protocols, func(s string) { t.Log(s) })
	require.NoError(t, err)
	for _, r := range rows {
		require.Empty(t, r.Disturbed, "%s: %d runs in a row were disturbed", r.Protocol, rebalancetimeline.Tries)
		require.Zero(t, r.Unprocessed, "%s: every order processed", r.Protocol)
		require.Len(t, r.Killed, 2, "%s: the killed member owned two partitions", r.Protocol)
		if r.Protocol == groups.Eager {
			require.Equal(t, 6, r.Join.Paused, "eager: a join stops every partition")
			require.Equal(t, 6, r.Kill.Paused, "eager: a death stops every partition")
		} else {
			require.Equal(t, 2, r.Join.Paused, "%s: a join stops only what moves; owners: %+v", r.Protocol, r.Owners)
			require.Equal(t, 2, r.Kill.Paused, "%s: a death stops only the dead member's partitions; owners: %+v", r.Protocol, r.Owners)
		}
		require.GreaterOrEqual(t, r.Kill.Longest, 4*time.Second, "%s: the dead member is noticed after its session times out (6 s)", r.Protocol)
		checkOwners(t, r)
	}
	// The picture of this run, as make rebalance-chart draws it.
	var img bytes.Buffer
	require.NoError(t, rebalancetimeline.WriteChart(&img, rows))
	_, err = png.Decode(&img)
	require.NoError(t, err)
	var b strings.Builder
	rebalancetimeline.Print(&b, rows)
	t.Log("\n" + b.String())
	if !env.Simulated {
		brewtest.MatchesReadme(t, "../README.md", "rebalance-timeline", b.String())
	}
}

// checkOwners holds the ownerships the picture draws to the run: a partition
// never has two owners at once, b owns nothing once killed, every partition
// has an owner at the end, and the partitions whose ownership ends and begins
// again while c joins are the ones the table counts as paused.
func checkOwners(t *testing.T, r rebalancetimeline.Row) {
	t.Helper()
	last := map[int32]time.Duration{}
	restarted := map[int32]bool{}
	for _, s := range r.Owners {
		require.GreaterOrEqual(t, s.From, last[s.Partition], "%s: partition %d has two owners at once: %+v", r.Protocol, s.Partition, s)
		last[s.Partition] = s.To
		if s.Member == "b" {
			require.LessOrEqual(t, s.To, r.KillAt, "%s: b owns nothing once killed", r.Protocol)
		}
		if s.From > r.JoinAt && s.From < r.KillAt {
			restarted[s.Partition] = true
		}
	}
	require.Len(t, last, 6, "%s: every partition had an owner", r.Protocol)
	for p, to := range last {
		require.Equal(t, r.End, to, "%s: partition %d is owned at the end", r.Protocol, p)
	}
	require.Len(t, restarted, r.Join.Paused, "%s: the partitions c's join stopped", r.Protocol)
}

package timeline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
	"github.com/brew-course/kafka/lectures/06-consumer-groups/timeline"
)

// A third member joins, then a member is killed (a real process, SIGKILL).
// Eager stops all six partitions both times; cooperative-sticky and the
// consumer protocol stop only the two that move. Nothing is left unprocessed.
func TestRebalanceTimelineReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	c := timeline.Defaults
	c.Member = []string{brewtest.BuildCmdAt(t, "../cmd/rebalance-timeline"), "member"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rows, err := timeline.Run(ctx, env.Config, c, groups.Protocols, func(s string) { t.Log(s) })
	require.NoError(t, err)
	for _, r := range rows {
		require.Zero(t, r.Unprocessed, "%s: every order processed", r.Protocol)
		require.Len(t, r.Killed, 2, "%s: the killed member owned two partitions", r.Protocol)
		if r.Protocol == groups.Eager {
			require.Equal(t, 6, r.Join.Paused, "eager: a join stops every partition")
			require.Equal(t, 6, r.Kill.Paused, "eager: a death stops every partition")
		} else {
			require.Equal(t, 2, r.Join.Paused, "%s: a join stops only what moves", r.Protocol)
			require.Equal(t, 2, r.Kill.Paused, "%s: a death stops only the dead member's partitions", r.Protocol)
		}
		require.GreaterOrEqual(t, r.Kill.Longest, 4*time.Second, "%s: the dead member is noticed after its session times out (6 s)", r.Protocol)
	}
	var b strings.Builder
	timeline.Print(&b, rows)
	t.Log("\n" + b.String())
	if !env.Simulated {
		brewtest.MatchesReadme(t, "../README.md", "rebalance-timeline", b.String())
	}
}

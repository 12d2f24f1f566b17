package quorummath_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/04-replication-isr/quorummath"
)

func TestRows(t *testing.T) {
	rows := quorummath.Rows(5)
	require.Equal(t, []quorummath.Row{
		{Nodes: 1, Majority: 1, Survives: 0},
		{Nodes: 2, Majority: 2, Survives: 0},
		{Nodes: 3, Majority: 2, Survives: 1},
		{Nodes: 4, Majority: 3, Survives: 1},
		{Nodes: 5, Majority: 3, Survives: 2},
	}, rows)
	require.Contains(t, rows[1].Note(), "survives nothing")
	for _, r := range quorummath.Rows(9) {
		require.GreaterOrEqual(t, r.Nodes, 2*r.Survives+1, "2N+1 nodes survive N failures")
		require.Less(t, r.Nodes, 2*(r.Survives+1)+1)
	}
}

// Two of three voters down: no Raft leader; one back: a leader again.
func TestQuorumNeedsMajorityReadmeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out strings.Builder
	lv, err := quorummath.RunLive(ctx, env.Config, env.NodeControl(t), func(s string) {
		t.Log(s)
		out.WriteString(s + "\n")
	})
	require.NoError(t, err)
	brewtest.MatchesReadme(t, "../README.md", "quorum-live", out.String())
	require.Len(t, lv.Stopped, 2)
	require.True(t, strings.HasPrefix(lv.NoMajority, "DescribeQuorum failed") || lv.NoMajority == "DescribeQuorum: no leader", lv.NoMajority)
	require.GreaterOrEqual(t, lv.LeaderOneBack, int32(1))
	t.Logf("leader stepped down %s after losing its majority; a leader again %s after one voter came back", lv.SteppedDownAfter, lv.RecoveredAfter)
}

func TestTableMatchesReadme(t *testing.T) {
	var b strings.Builder
	quorummath.PrintTable(&b, quorummath.Rows(7))
	brewtest.MatchesReadme(t, "../README.md", "quorum-math", b.String())
}

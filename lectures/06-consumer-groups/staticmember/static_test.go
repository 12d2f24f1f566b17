package staticmember_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/staticmember"
)

// A static member restarted within the session timeout gets the same
// partitions in the same generation, and the other member sees nothing; a
// dynamic one leaves and rejoins: new generations, partitions moving.
func TestStaticMemberRestartsWithoutARebalanceReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := staticmember.Run(ctx, env.Config, func(s string) { t.Log(s) })
	require.NoError(t, err)
	require.Less(t, res.Static.Down, 6*time.Second, "restarted within the session timeout")
	require.Equal(t, res.Static.Before, res.Static.After, "static: the same partitions back")
	require.Zero(t, res.Static.OtherMoves, "static: the other member saw nothing")
	if !env.Simulated { // kfake bumps the generation when a static member rejoins
		require.Equal(t, res.Static.GenBefore, res.Static.GenAfter, "static: no new generation")
	}
	require.Greater(t, res.Dynamic.GenAfter, res.Dynamic.GenBefore, "dynamic: the group rebalanced")
	require.Positive(t, res.Dynamic.OtherMoves, "dynamic: the other member's partitions moved")
	if !env.Simulated {
		var b strings.Builder
		res.Print(&b)
		brewtest.MatchesReadme(t, "../README.md", "static-member", b.String())
	}
}

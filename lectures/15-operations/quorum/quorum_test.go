package quorum_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/15-operations/quorum"
)

// The table: an odd count survives as many failures as the even count
// above it, which only adds a vote to wait for.
func TestSizes(t *testing.T) {
	want := []quorum.Size{{1, 1, 0}, {2, 2, 0}, {3, 2, 1}, {4, 3, 1}, {5, 3, 2}}
	require.Equal(t, want, quorum.Sizes())
}

// On real Kafka the course stand's quorum is static: three voters with a
// leader, and AddRaftVoter and RemoveRaftVoter are refused with
// UNSUPPORTED_VERSION because kraft.version is 0; the voters are the same
// after the questions. make quorum prints what the README shows.
func TestStaticQuorumRefusesVoterChangesReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := quorum.Run(ctx, env.Config)
	require.NoError(t, err)
	require.False(t, res.Dynamic)
	require.Equal(t, int16(0), res.KRaft)
	require.ElementsMatch(t, []int32{1, 2, 3}, res.Quorum.VoterIDs())
	require.Contains(t, []int32{1, 2, 3}, res.Quorum.LeaderID)
	require.Contains(t, res.AddAnswer, "UNSUPPORTED_VERSION")
	require.Contains(t, res.RemoveAnswer, "UNSUPPORTED_VERSION")
	after, err := quorum.Run(ctx, env.Config)
	require.NoError(t, err)
	require.ElementsMatch(t, []int32{1, 2, 3}, after.Quorum.VoterIDs(), "nothing changed")
	var b strings.Builder
	res.Print(&b)
	brewtest.MatchesReadme(t, "../README.md", "quorum", b.String())
}

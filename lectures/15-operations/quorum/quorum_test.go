package quorum_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/15-operations/lab/labtest"
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

// On a lab cluster of its own, a dynamic quorum (kraft.version 1) takes
// controller 4 as a voter and lets controller 1 go, with a leader
// throughout and a witness losing and duplicating nothing; Kafka's
// kafka-metadata-quorum sees the same voters at the end. make quorum-dynamic
// prints what the README shows. (Alone: four more JVMs on the machine.)
func TestDynamicQuorumReadmeAlone(t *testing.T) {
	s := labtest.Stand(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var tool string
	inspect := func(ctx context.Context, bootstrap string) error {
		cmd, err := s.JavaClass(ctx, "org.apache.kafka.tools.MetadataQuorumCommand", "--bootstrap-server", bootstrap, "describe", "--status")
		if err != nil {
			return err
		}
		out, err := cmd.CombinedOutput()
		tool = string(out)
		return err
	}
	res, err := quorum.RunDynamic(ctx, s, 100, inspect, func(line string) { t.Log(line) })
	require.NoError(t, err, "kafka-metadata-quorum said:\n%s", tool)
	var b strings.Builder
	res.Print(&b)
	t.Log("\n" + b.String())

	want := []struct {
		voters    []int32
		observers []int32
	}{{[]int32{1, 2, 3}, nil}, {[]int32{1, 2, 3}, []int32{4}}, {[]int32{1, 2, 3, 4}, nil}, {[]int32{2, 3, 4}, []int32{1}}}
	require.Len(t, res.Steps, len(want))
	for i, w := range want {
		st := res.Steps[i]
		require.Equal(t, w.voters, st.Voters, "%s: voters", st.Name)
		require.Equal(t, w.observers, st.Observers, "%s: observers", st.Name)
		require.Equal(t, int16(1), st.KRaft, "%s: kraft.version", st.Name)
		require.Contains(t, st.Voters, st.Leader, "%s: a voter leads", st.Name)
	}
	require.Positive(t, res.Polls)
	require.Less(t, res.LongestLeaderless, 10*time.Second, "a leader throughout, or elected again within seconds")
	require.True(t, res.Witness.OK(), "witness: %s", res.Witness)
	require.Zero(t, res.Witness.Failed, "witness: %s", res.Witness)
	require.Positive(t, res.Witness.Read)

	// kafka-metadata-quorum: "CurrentVoters: [{"id": 2, ...}, ...]"
	line := regexp.MustCompile(`(?m)^CurrentVoters:\s+(.*)$`).FindStringSubmatch(tool)
	require.NotNil(t, line, "no CurrentVoters in:\n%s", tool)
	var ids []string
	for _, m := range regexp.MustCompile(`"id":\s*(\d+)`).FindAllStringSubmatch(line[1], -1) {
		ids = append(ids, m[1])
	}
	require.Equal(t, []string{"2", "3", "4"}, ids, "kafka-metadata-quorum's voters")
	brewtest.MatchesReadme(t, "../README.md", "quorum-dynamic", b.String())
}

package quorumstatus_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/01-architecture-kraft/quorumstatus"
)

const readme = "../README.md"

func describe(t *testing.T, cl *kgo.Client) quorumstatus.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := quorumstatus.Describe(ctx, cl)
	require.NoError(t, err)
	return st
}

// The fast tier: the program's result on the simulated cluster.
func TestDescribeSimulatedReadmeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	if !env.Simulated {
		t.Skip("this test is about the simulation; the real tier runs TestRealQuorumReadme")
	}
	cl := env.Client(t)
	st := describe(t, cl)
	require.Equal(t, brewkit.ClusterID, st.ClusterID)
	require.Len(t, st.Brokers, 3)
	require.Equal(t, []int32{1, 2, 3}, st.Voters)
	require.Equal(t, int32(3), st.RaftLeader)
	require.True(t, st.Simulated)
	require.Equal(t, "broker + active controller", st.Role(3))
	require.Equal(t, "broker + voter", st.Role(1))

	var out bytes.Buffer
	st.Print(&out)
	brewtest.MatchesReadme(t, readme, "quorum-status-embedded", out.String())

	if env.Sim == nil {
		return // the embedded stand: its nodes are the instructor's, not the test's
	}
	require.NoError(t, env.NodeControl(t).StopNode(context.Background(), 2, false))
	brewtest.Eventually(t, 10*time.Second, "node 2 leaves the metadata", func() (bool, string) {
		st = describe(t, cl)
		return len(st.Brokers) == 2, st.Role(2)
	})
	require.Equal(t, []int32{1, 2, 3}, st.Voters, "a stopped voter is still a voter")
	require.Equal(t, "voter, not answering", st.Role(2))
	rows := st.Rows()
	require.Len(t, rows, 3)
	require.Equal(t, quorumstatus.Row{Node: 2, Host: "-", Port: "-", Rack: "-", Role: "voter, not answering"}, rows[1])
}

// The real tier: the quorum as real Kafka reports it, checked against Kafka's
// own kafka-metadata-quorum tool and the README.
func TestRealQuorumReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	st := describe(t, env.Client(t))

	require.Equal(t, brewkit.ClusterID, st.ClusterID)
	require.Len(t, st.Brokers, 3, "brokers")
	require.Equal(t, []int32{1, 2, 3}, st.Voters)
	require.Contains(t, st.Voters, st.RaftLeader)
	require.False(t, st.Simulated)
	leaders := 0
	for _, r := range st.Rows() {
		if r.Role == "broker + active controller" {
			leaders++
		}
	}
	require.Equal(t, 1, leaders, "exactly one active controller in the table")

	toolLeader, toolVoters, toolOut := kafkaQuorumTool(t, env)
	require.Equal(t, toolLeader, st.RaftLeader, "RaftLeader equals kafka-metadata-quorum's LeaderId")
	require.Equal(t, toolVoters, st.Voters, "CurrentVoters equal kafka-metadata-quorum's")
	brewtest.MatchesReadme(t, readme, "quorum-cli", toolOut)

	var out bytes.Buffer
	st.Print(&out)
	brewtest.MatchesReadme(t, readme, "quorum-status", out.String())
}

// kafkaQuorumTool runs `kafka-metadata-quorum describe --status` on the stand
// and returns its LeaderId, voter ids and output.
func kafkaQuorumTool(t *testing.T, env *brewtest.Env) (int32, []int32, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, err := env.Stand(t).Tool(ctx, "kafka-metadata-quorum", "describe", "--status")
	require.NoError(t, err)
	out, err := cmd.Output()
	require.NoError(t, err, "kafka-metadata-quorum: %s", out)
	m := regexp.MustCompile(`(?m)^LeaderId:\s+(\d+)`).FindSubmatch(out)
	require.NotNil(t, m, "no LeaderId in:\n%s", out)
	leader, _ := strconv.Atoi(string(m[1]))
	voterLine := regexp.MustCompile(`(?m)^CurrentVoters:\s+(.*)$`).FindSubmatch(out)
	require.NotNil(t, voterLine, "no CurrentVoters in:\n%s", out)
	var voters []int32
	for _, v := range regexp.MustCompile(`"id":\s*(\d+)`).FindAllSubmatch(voterLine[1], -1) {
		id, _ := strconv.Atoi(string(v[1]))
		voters = append(voters, int32(id))
	}
	slices.Sort(voters)
	return int32(leader), voters, string(out)
}

// The lecture's live demo on real Kafka: stop the active controller, a new
// leader is elected, and the node comes back as a voter.
func TestRealLeaderFailoverReadmeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	nodes := env.NodeControl(t) // holds the stand lock (before the leader is read) and restores the stand at the end
	cl := env.Client(t)
	old := describe(t, cl).RaftLeader
	require.GreaterOrEqual(t, old, int32(1))

	var w quorumstatus.Watch
	w.Observe(describe(t, cl), nil, time.Now())

	// What the instructor types: make stop-leader.
	start := time.Now()
	cmd := exec.Command("make", "--no-print-directory", "stop-leader")
	cmd.Dir = ".."
	stopOut, err := cmd.CombinedOutput()
	require.NoError(t, err, "make stop-leader: %s", stopOut)
	brewtest.MatchesReadme(t, readme, "stop-leader", string(stopOut))
	require.Contains(t, string(stopOut), fmt.Sprintf("Raft leader is node %d;", old))

	var st quorumstatus.Status
	elected := brewtest.Eventually(t, 30*time.Second, "a new Raft leader", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		s, err := quorumstatus.Describe(ctx, cl)
		if err != nil {
			return false, err.Error()
		}
		st = s
		w.Observe(s, nil, time.Now())
		return s.RaftLeader >= 1 && s.RaftLeader != old && len(s.Brokers) == 2, "RaftLeader " + strconv.Itoa(int(s.RaftLeader))
	})
	t.Logf("node %d stopped; node %d leads %s after make stop-leader returned (%s after it was typed)",
		old, st.RaftLeader, elected.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	require.Equal(t, []int32{1, 2, 3}, st.Voters, "the stopped node is still a voter")
	require.Equal(t, "broker + active controller", st.Role(st.RaftLeader))
	require.Equal(t, "voter, not answering", st.Role(old))
	brewtest.MatchesReadme(t, readme, "watch-after-stop", w.Frame(st, nil, time.Now()))

	restarted := time.Now()
	require.NoError(t, nodes.StartNode(context.Background(), int(old)))
	back := brewtest.Eventually(t, 60*time.Second, "three registered brokers, every voter caught up", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		s, err := quorumstatus.Describe(ctx, cl)
		if err != nil {
			return false, err.Error()
		}
		q, err := brewkit.DescribeQuorum(ctx, cl)
		if err != nil {
			return false, err.Error()
		}
		for _, v := range q.Voters {
			if v.LastCaughtUp.Before(restarted) {
				return false, "voter " + strconv.Itoa(int(v.ID)) + " not caught up since the restart"
			}
		}
		return len(s.Brokers) == 3, strconv.Itoa(len(s.Brokers)) + " brokers"
	})
	t.Logf("node %d back as a caught-up voter %s after start-node returned", old, back.Round(time.Millisecond))
}

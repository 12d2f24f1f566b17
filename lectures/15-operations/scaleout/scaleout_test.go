package scaleout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/15-operations/restore"
	"github.com/brew-course/kafka/lectures/15-operations/scaleout"
)

// The plan gives node 4 its share of the replicas (18 on 4 nodes: 4), one
// partition at a time, taking each from the most loaded node, new replica
// first; every partition keeps three replicas on three nodes.
func TestPlan(t *testing.T) {
	before := scaleout.Assignment{}
	for p := range int32(6) {
		before[p] = []int32{1 + p%3, 1 + (p+1)%3, 1 + (p+2)%3}
	}
	target := scaleout.Plan(before)
	require.Equal(t, 4, target.On(scaleout.Node))
	load := map[int32]int{}
	for p, rs := range target {
		require.Len(t, rs, 3)
		require.Len(t, slices.Compact(slices.Sorted(slices.Values(rs))), 3, "partition %d: three nodes", p)
		if slices.Contains(rs, scaleout.Node) {
			require.Equal(t, int32(scaleout.Node), rs[0], "partition %d: node 4 first, to lead after the election", p)
		}
		for _, r := range rs {
			load[r]++
		}
	}
	for n := int32(1); n <= 4; n++ {
		require.InDelta(t, 4.5, load[n], 0.5, "node %d carries %d replicas", n, load[n])
	}
}

// On real Kafka: node 4 joins and nothing moves by itself; the throttled
// reassignment puts the target replicas on it with the ISR full, copying
// within 20% of the throttle; Kafka's own tools see the same; the drain
// takes node 4 out and the stand is back to three brokers; the witness
// loses and duplicates nothing.
func TestScaleOutReadmeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	env.Exclusive(t)
	s := env.Stand(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		d, err := restore.Run(context.Background(), env.Config, s)
		t.Logf("%s (%v)", d, err)
	})

	c := scaleout.Defaults
	c.Moved = func(ctx context.Context, res scaleout.Result) error {
		// Kafka's own tools see the same replicas and ISR, and call the reassignment complete.
		for _, p := range env.KafkaTopicsDescribe(t, res.Topic) {
			require.Equal(t, res.After[p.ID], p.Replicas, "kafka-topics: partition %d's replicas", p.ID)
			require.Equal(t, slices.Sorted(slices.Values(res.After[p.ID])), p.ISR, "kafka-topics: partition %d's ISR", p.ID)
		}
		verify := reassignVerify(t, env, res.Topic, res.Target)
		for p := range res.Target {
			require.Contains(t, verify, fmt.Sprintf("Reassignment of partition %s-%d is completed", res.Topic, p))
		}
		return nil
	}
	res, err := scaleout.Run(ctx, env.Config, s, c, func(line string) { t.Log(line) })
	require.NoError(t, err)
	var out bytes.Buffer
	res.Print(&out)
	t.Log("\n" + out.String())

	require.True(t, res.Untouched, "nothing moved onto node 4 by itself")
	require.Equal(t, res.Target.String(), res.After.String(), "the replicas are the target's")
	require.True(t, res.ISRFull, "every ISR is its replicas")
	for p, rs := range res.Target {
		if rs[0] == scaleout.Node {
			require.Equal(t, int32(scaleout.Node), res.Leaders[p], "partition %d: node 4, first, leads after the election", p)
		}
	}
	require.InEpsilon(t, float64(res.Throttle), res.Rate, 0.2, "the copy rate %.0f B/s within 20%% of the throttle %d B/s", res.Rate, res.Throttle)
	require.True(t, res.Drained && res.Unregistered, "node 4 drained and unregistered")
	require.True(t, res.Witness.OK(), "witness: %s", res.Witness)
	require.Zero(t, res.Witness.Failed, "witness: %s", res.Witness)
	brewtest.MatchesReadme(t, "../README.md", "scale-out", out.String())

	// The stand is back to its contract: three brokers, nothing of node 4.
	cl := env.Client(t)
	all, fenced, err := restore.RegisteredBrokers(ctx, cl)
	require.NoError(t, err)
	require.Equal(t, []int32{1, 2, 3}, all, "the stand is back to three brokers")
	require.Empty(t, fenced)
	d, err := restore.Run(ctx, env.Config, s)
	require.NoError(t, err)
	require.Equal(t, restore.Done{}, d, "after a whole run restore finds nothing to do: %s", d)
}

// A run stopped with node 4 up (as by Ctrl-C: the run deletes its topic
// and throttles on the way out) leaves the stand with four brokers, here
// with a topic of the student's on node 4; restore moves that partition off
// node 4, stops and unregisters it, and the stand is back to three.
func TestRestoreAfterAnInterruptedScaleOutAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	env.Exclusive(t)
	s := env.Stand(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := scaleout.Defaults
	c.Preload = 4 << 20
	c.Throttle = 8 << 20
	interrupted := errors.New("interrupted")
	cl := env.Client(t)
	mine := fmt.Sprintf("brew.ops.mine.%d", time.Now().UnixNano()%1_000_000)
	t.Cleanup(func() { env.Admin(t).DeleteTopic(context.Background(), mine) }) //nolint:errcheck // best effort
	c.Moved = func(ctx context.Context, _ scaleout.Result) error {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 30_000
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = mine, -1, -1
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Replicas = []int32{scaleout.Node, 1, 2}
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		require.NoError(t, kerr.ErrorForCode(resp.Topics[0].ErrorCode), "creating %s on node 4", mine)
		return interrupted
	}
	_, err := scaleout.Run(ctx, env.Config, s, c, func(line string) { t.Log(line) })
	require.ErrorIs(t, err, interrupted)
	all, _, err := restore.RegisteredBrokers(ctx, cl)
	require.NoError(t, err)
	require.Equal(t, []int32{1, 2, 3, 4}, all, "node 4 left in the cluster")

	d, err := restore.Run(ctx, env.Config, s)
	require.NoError(t, err)
	t.Log(d)
	require.Equal(t, 1, d.Moved, "restore moves %s off node 4: %s", mine, d)
	require.True(t, d.Stopped && d.Unregistered, "restore stops and unregisters node 4: %s", d)
	all, fenced, err := restore.RegisteredBrokers(ctx, cl)
	require.NoError(t, err)
	require.Equal(t, []int32{1, 2, 3}, all, "the stand is back to three brokers")
	require.Empty(t, fenced)
	td, err := env.Admin(t).ListTopics(ctx, mine)
	require.NoError(t, err)
	require.NotContains(t, td[mine].Partitions[0].Replicas, int32(scaleout.Node), "%s is off node 4", mine)
	again, err := restore.Run(ctx, env.Config, s)
	require.NoError(t, err)
	require.Equal(t, restore.Done{}, again, "a second restore finds nothing to do")
}

// reassignVerify runs kafka-reassign-partitions --verify on the plan, fed
// on stdin (the docker stand runs the tool in a container), and returns what it said.
func reassignVerify(t *testing.T, env *brewtest.Env, topic string, target scaleout.Assignment) string {
	t.Helper()
	type part struct {
		Topic     string  `json:"topic"`
		Partition int32   `json:"partition"`
		Replicas  []int32 `json:"replicas"`
	}
	plan := struct {
		Version    int    `json:"version"`
		Partitions []part `json:"partitions"`
	}{Version: 1}
	for _, p := range slices.Sorted(maps.Keys(target)) {
		plan.Partitions = append(plan.Partitions, part{topic, p, target[p]})
	}
	js, err := json.Marshal(plan)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, err := env.Stand(t).Tool(ctx, "kafka-reassign-partitions", "--verify", "--preserve-throttles", "--reassignment-json-file", "/dev/stdin")
	require.NoError(t, err)
	cmd.Stdin = bytes.NewReader(js)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "kafka-reassign-partitions --verify:\n%s", out)
	return string(out)
}

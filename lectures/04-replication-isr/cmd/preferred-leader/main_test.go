package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// The README's step 4 on real Kafka: a topic laid out as brew.orders.v1 is
// (replicas [3 1 2], [1 2 3], [2 3 1], twice), node 1 restarted, so its two
// partitions are led by node 2; the program shows it, elects the preferred
// leaders, and each node leads two again. The simulation always leads from
// the first replica, so this is real-only.
func TestRestartedNodeGetsItsLeadershipBackReadmeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	nodes := env.NodeControl(t)
	topic := createLaidOut(t, env)
	bin := brewtest.BuildCmd(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// Kafka's own leader rebalance (every 5 minutes) may beat the program to
	// it; then there is nothing to show, and the test restarts node 1 again.
	for attempt := 1; ; attempt++ {
		if err := nodes.StopNode(ctx, 1, false); err != nil {
			t.Fatal(err)
		}
		if err := nodes.StartNode(ctx, 1); err != nil {
			t.Fatal(err)
		}
		brewtest.Eventually(t, 2*time.Minute, "node 1 back in every ISR", func() (bool, string) {
			return fullISR(t, env, topic), "ISR not full yet"
		})
		out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-topic", topic)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if strings.Contains(out, "not on their preferred leader: 0 of 6\n") && attempt < 2 {
			t.Logf("Kafka's own leader rebalance came first; restarting node 1 again")
			continue
		}
		brewtest.MatchesReadme(t, "../../README.md", "preferred-leader", out)
		return
	}
}

func createLaidOut(t *testing.T, env *brewtest.Env) string {
	t.Helper()
	topic := fmt.Sprintf("brew.test.preferred-%d", rand.Uint32())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p, replicas := range [][]int32{{3, 1, 2}, {1, 2, 3}, {2, 3, 1}, {3, 1, 2}, {1, 2, 3}, {2, 3, 1}} {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(p), replicas
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	req.Topics = append(req.Topics, rt)
	cl := env.Client(t)
	resp, err := req.RequestWith(ctx, cl)
	if err == nil && resp.Topics[0].ErrorCode != 0 {
		err = fmt.Errorf("error code %d: %v", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage)
	}
	if err != nil {
		t.Fatalf("creating %s: %v", topic, err)
	}
	t.Cleanup(func() { env.Admin(t).DeleteTopics(context.Background(), topic) }) //nolint:errcheck // best effort
	brewtest.Eventually(t, 30*time.Second, "the topic's leaders", func() (bool, string) { return fullISR(t, env, topic), topic })
	return topic
}

func fullISR(t *testing.T, env *brewtest.Env, topic string) bool {
	td, err := env.Admin(t).ListTopics(context.Background(), topic)
	if err != nil || len(td[topic].Partitions) != 6 {
		return false
	}
	for _, p := range td[topic].Partitions {
		if p.Leader < 0 || len(p.ISR) != 3 {
			return false
		}
	}
	return true
}

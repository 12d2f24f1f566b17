package sim_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/sim"
)

func start(t *testing.T) (*sim.Cluster, *kgo.Client) {
	t.Helper()
	c, err := sim.New(sim.Options{})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	cl, err := brewkit.NewClient(c.Config(), kgo.RecordRetries(3))
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return c, cl
}

func quorum(t *testing.T, cl *kgo.Client) kmsg.DescribeQuorumResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Len(t, resp.Topics, 1)
	require.Len(t, resp.Topics[0].Partitions, 1)
	return resp.Topics[0].Partitions[0]
}

func brokers(t *testing.T, cl *kgo.Client) []int32 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// WithAuthorizedOps makes kadm ask the cluster instead of kgo's metadata
	// cache, which would keep answering with the brokers it saw first.
	md, err := kadm.NewClient(cl).BrokerMetadata(kadm.WithAuthorizedOps(ctx))
	require.NoError(t, err)
	return md.Brokers.NodeIDs()
}

// waitBrokers waits until metadata lists exactly want; the client may answer
// from metadata it cached a moment ago.
func waitBrokers(t *testing.T, cl *kgo.Client, want ...int32) {
	t.Helper()
	var got []int32
	require.Eventually(t, func() bool {
		got = brokers(t, cl)
		return assert.ObjectsAreEqual(want, slices.Sorted(slices.Values(got)))
	}, 5*time.Second, 50*time.Millisecond, "brokers in metadata: got %v, want %v", got, want)
}

func TestLooksLikeTheCourseCluster(t *testing.T) {
	_, cl := start(t)
	ctx := context.Background()

	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	require.NoError(t, err)
	require.Equal(t, brewkit.ClusterID, md.Cluster)
	require.ElementsMatch(t, []int32{1, 2, 3}, md.Brokers.NodeIDs())

	p := quorum(t, cl)
	require.Equal(t, sim.Controller, p.LeaderID)
	var voters []int32
	for _, v := range p.CurrentVoters {
		voters = append(voters, v.ReplicaID)
	}
	require.Equal(t, []int32{1, 2, 3}, voters)

	simulated, err := brewkit.IsSimulated(ctx, cl)
	require.NoError(t, err)
	require.True(t, simulated)
}

func TestStopNodeTakesItAwayAndStartBringsItBack(t *testing.T) {
	c, cl := start(t)
	require.ErrorContains(t, c.StopNode(3), "fixed controller")
	require.NoError(t, c.StopNode(2))
	require.ErrorContains(t, c.StopNode(2), "already stopped")
	waitBrokers(t, cl, 1, 3)
	require.Equal(t, sim.Controller, quorum(t, cl).LeaderID, "two of three voters are a majority")

	require.NoError(t, c.StartNode(2))
	waitBrokers(t, cl, 1, 2, 3)
}

func TestNotEnoughReplicasWithOneNodeLeft(t *testing.T) {
	c, cl := start(t)
	ctx := context.Background()
	adm := kadm.NewClient(cl)
	_, err := adm.CreateTopic(ctx, 3, 3, nil, "orders")
	require.NoError(t, err)

	produce := func(acks kgo.Acks) error {
		p, err := brewkit.NewClient(c.Config(), kgo.RequiredAcks(acks), kgo.DisableIdempotentWrite(),
			kgo.RecordRetries(1), kgo.RecordDeliveryTimeout(5*time.Second))
		require.NoError(t, err)
		defer p.Close()
		return p.ProduceSync(ctx, &kgo.Record{Topic: "orders", Key: []byte("order-1"), Value: []byte("{}")}).FirstErr()
	}
	require.NoError(t, c.StopNode(2))
	require.NoError(t, produce(kgo.AllISRAcks()), "one node down: two live replicas meet min.insync.replicas=2")

	require.NoError(t, c.StopNode(1))
	require.Equal(t, int32(-1), quorum(t, cl).LeaderID, "one voter of three is no majority")
	err = produce(kgo.AllISRAcks())
	require.True(t, errors.Is(err, kerr.NotEnoughReplicas), "got %v", err)
	require.NoError(t, produce(kgo.LeaderAck()), "acks=1 does not wait for the ISR")

	require.NoError(t, c.StartNode(1))
	require.Equal(t, sim.Controller, quorum(t, cl).LeaderID)
}

func TestDataSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	c, err := sim.New(sim.Options{DataDir: dir})
	require.NoError(t, err)
	cl, err := brewkit.NewClient(c.Config())
	require.NoError(t, err)
	_, err = kadm.NewClient(cl).CreateTopic(ctx, 1, 3, nil, "menu")
	require.NoError(t, err)
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "menu", Value: []byte("latte")}).FirstErr())
	cl.Close()
	c.Close()

	c, err = sim.New(sim.Options{DataDir: dir})
	require.NoError(t, err)
	defer c.Close()
	cl, err = brewkit.NewClient(c.Config(), kgo.ConsumeTopics("menu"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fs := cl.PollFetches(fctx)
	require.NoError(t, fs.Err())
	require.Equal(t, "latte", string(fs.Records()[0].Value))
}

func TestStoppedNodeLeavesLeadersAndISR(t *testing.T) {
	c, cl := start(t)
	ctx := context.Background()
	adm := kadm.NewClient(cl)
	_, err := adm.CreateTopic(ctx, 6, 3, nil, "kitchen")
	require.NoError(t, err)
	require.NoError(t, c.StopNode(2))

	var saw string
	require.Eventually(t, func() bool {
		td, err := adm.ListTopics(kadm.WithAuthorizedOps(ctx), "kitchen")
		if err != nil {
			return false
		}
		saw = fmt.Sprint(td["kitchen"].Partitions)
		for _, p := range td["kitchen"].Partitions {
			if p.Leader == 2 || slices.Contains(p.ISR, 2) || len(p.ISR) != 2 {
				return false
			}
		}
		return len(td["kitchen"].Partitions) == 6
	}, 5*time.Second, 50*time.Millisecond, "partitions still on node 2: %s", saw)
}

// A paused node answers nothing until resumed; then the waiting request is
// answered.
func TestPausedNodeStallsUntilResumed(t *testing.T) {
	c, _ := start(t)
	direct, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()[0])) // node 1 only
	require.NoError(t, err)
	defer direct.Close()
	ask := func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_, err := direct.Broker(1).Request(ctx, kmsg.NewPtrMetadataRequest())
		return err
	}
	require.NoError(t, ask(5*time.Second))
	require.NoError(t, c.PauseNode(1))
	require.Equal(t, map[int32]bool{1: true}, c.Paused())
	require.ErrorIs(t, ask(500*time.Millisecond), context.DeadlineExceeded, "a paused node answers nothing")

	done := make(chan error, 1)
	go func() { done <- ask(10 * time.Second) }()
	time.Sleep(200 * time.Millisecond) // the request is waiting on node 1
	require.NoError(t, c.ResumeNode(1))
	require.NoError(t, <-done, "the waiting request is answered after resume")
	require.Empty(t, c.Paused())
	require.ErrorContains(t, c.ResumeNode(1), "not paused")
}

// acks=all with a paused follower: the leader writes, waits for the follower,
// and the request times out; the record is in the log all the same.
func TestPausedFollowerTimesOutAcksAllWrites(t *testing.T) {
	c, _ := start(t)
	adm := kadm.NewClient(mustClient(t, c))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := brewkit.EnsureTopics(ctx, adm, brewkit.Topic{Name: "brew.t", Partitions: 1, RF: 3, Retention: time.Hour})
	require.NoError(t, err)
	leader := c.LeaderOf("brew.t", 0)
	follower := int32(1)
	if leader == 1 {
		follower = 2
	}
	p := mustClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(),
		kgo.ProduceRequestTimeout(300*time.Millisecond), kgo.RecordRetries(0))
	require.NoError(t, p.ProduceSync(ctx, &kgo.Record{Topic: "brew.t", Value: []byte("w")}).FirstErr())
	// Paused after the clients know the cluster: a client may send its
	// metadata requests to the paused node and wait there, as with a hung broker.
	require.NoError(t, c.PauseNode(follower))
	err = p.ProduceSync(ctx, &kgo.Record{Topic: "brew.t", Value: []byte("x")}).FirstErr()
	require.Error(t, err, "the leader waited for the paused follower past the request's time-out")
	require.NoError(t, c.ResumeNode(follower))
	ends, err := adm.ListEndOffsets(ctx, "brew.t")
	require.NoError(t, err)
	end, _ := ends.Lookup("brew.t", 0)
	require.Equal(t, int64(2), end.Offset, "written despite the time-out")
	require.NoError(t, p.ProduceSync(ctx, &kgo.Record{Topic: "brew.t", Value: []byte("y")}).FirstErr())
}

func mustClient(t *testing.T, c *sim.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := brewkit.NewClient(c.Config(), opts...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}

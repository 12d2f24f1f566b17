package lecture_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// The stands' broker.session.timeout.ms and broker.heartbeat.interval.ms
// (Kafka's defaults).
const (
	sessionTimeout    = 9 * time.Second
	heartbeatInterval = 2 * time.Second
)

// A paused node is a hung broker: its process and ports are there, but it
// sends no heartbeat. The controller fences it once its session times out
// (broker.session.timeout.ms, 9 s after the last heartbeat; the broker sends
// one every broker.heartbeat.interval.ms, 2 s), which takes it out of every
// ISR, a little before the leaders' own replica.lag.time.max.ms (10 s on the
// stands) would. Until then acks=all writes wait for it. After resume it
// catches up and comes back.
func TestPausedNodeLeavesTheISRAndReturnsAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	nodes := env.NodeControl(t)
	topic := env.FreshTopic(t, "pause", 1)
	adm := env.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	p := td[topic].Partitions[0]
	follower := p.Replicas[0]
	if follower == p.Leader {
		follower = p.Replicas[1]
	}
	// A producer that keeps the leader busy, so the follower's silence shows.
	prod := env.Client(t, kgo.RequiredAcks(kgo.AllISRAcks()))
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("warm-up")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	var hold sync.Mutex // held, the producer waits
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			hold.Lock()
			prod.Produce(ctx, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprint(rand.Int()))}, nil)
			hold.Unlock()
		}
	}()
	// isr is the partition's ISR and the brokers the metadata lists: a fenced
	// broker is not among them, though its process runs.
	isr := func() (isr, brokers []int32) {
		lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		m, err := adm.Metadata(lctx, topic)
		if err != nil {
			return nil, nil
		}
		return m.Topics[topic].Partitions[0].ISR, m.Brokers.NodeIDs()
	}

	// The follower must be caught up when it freezes, or the leader's lag
	// clock (which counts from its last caught-up fetch) could beat the
	// controller's: hold the producer and wait for every write's acks=all
	// answer, which comes once each replica in the ISR has fetched it.
	hold.Lock()
	brewtest.Eventually(t, 30*time.Second, fmt.Sprintf("node %d caught up, in the ISR", follower), func() (bool, string) {
		if err := prod.Flush(ctx); err != nil {
			return false, err.Error()
		}
		got, _ := isr()
		return slices.Contains(got, follower), fmt.Sprint(got)
	})
	err = nodes.PauseNode(ctx, int(follower))
	hold.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	var brokers []int32
	took := brewtest.Eventually(t, 40*time.Second, fmt.Sprintf("node %d out of the ISR", follower), func() (bool, string) {
		var got []int32
		got, brokers = isr()
		return got != nil && !slices.Contains(got, follower), fmt.Sprintf("ISR %v, brokers %v", got, brokers)
	})
	t.Logf("node %d paused: out of the ISR after %s, brokers %v", follower, took.Round(time.Millisecond), brokers)
	if slices.Contains(brokers, follower) {
		t.Fatalf("node %d left the ISR %s after the pause while still registered: the controller had not fenced it", follower, took)
	}
	// The session runs from the last heartbeat the controller received, at
	// most an interval before the pause, or two on a busy machine (the next
	// heartbeat is sent an interval after the previous one's answer).
	if least := sessionTimeout - 2*heartbeatInterval; took < least {
		t.Fatalf("node %d was fenced %s after the pause: sooner than broker.session.timeout.ms (%s) allows, with heartbeats every %s", follower, took, sessionTimeout, heartbeatInterval)
	}
	if err := nodes.ResumeNode(ctx, int(follower)); err != nil {
		t.Fatal(err)
	}
	back := brewtest.Eventually(t, 60*time.Second, fmt.Sprintf("node %d back in the ISR", follower), func() (bool, string) {
		got, _ := isr()
		return slices.Contains(got, follower), fmt.Sprint(got)
	})
	t.Logf("node %d resumed: back in the ISR after %s", follower, back.Round(time.Millisecond))
}

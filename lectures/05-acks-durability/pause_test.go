package lecture_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// A paused node is a hung broker: it stays registered, but while acks=all
// writes go on the leaders drop it from the ISR after replica.lag.time.max.ms
// (10 s on the stands), and after resume it catches up and comes back.
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
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			prod.Produce(ctx, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprint(rand.Int()))}, nil)
		}
	}()
	isr := func() []int32 {
		lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		td, err := adm.ListTopics(kadm.WithAuthorizedOps(lctx), topic)
		if err != nil {
			return nil
		}
		return td[topic].Partitions[0].ISR
	}

	if err := nodes.PauseNode(ctx, int(follower)); err != nil {
		t.Fatal(err)
	}
	took := brewtest.Eventually(t, 40*time.Second, fmt.Sprintf("node %d out of the ISR", follower), func() (bool, string) {
		got := isr()
		return got != nil && !slices.Contains(got, follower), fmt.Sprint(got)
	})
	t.Logf("node %d paused: out of the ISR after %s", follower, took.Round(time.Millisecond))
	if took < 9*time.Second {
		t.Fatalf("node %d left the ISR %s after the pause: sooner than replica.lag.time.max.ms (10 s) allows", follower, took)
	}
	if err := nodes.ResumeNode(ctx, int(follower)); err != nil {
		t.Fatal(err)
	}
	back := brewtest.Eventually(t, 60*time.Second, fmt.Sprintf("node %d back in the ISR", follower), func() (bool, string) {
		got := isr()
		return slices.Contains(got, follower), fmt.Sprint(got)
	})
	t.Logf("node %d resumed: back in the ISR after %s", follower, back.Round(time.Millisecond))
}

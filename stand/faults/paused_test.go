package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// On real Kafka a paused node (make pause-node) holds a producer's writes
// and a consumer's fetches unanswered; the controller fences it only after
// broker.session.timeout.ms (9 s) and moves its leaders away. With
// KAFKA_TIMEOUT=2s a producer (load-and-watch) and a consumer (member) that
// were running when the node paused end before that, each with one line
// that names what it waited for. (Started against a node paused already,
// they may as well go on once it is fenced and its leaders have moved.)
const pausedTimeout = 2 * time.Second

func TestPausedNodeEndsAProducerAndAConsumerAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	nodes := env.NodeControl(t)
	root := repoRoot(t)
	loadWatch := brewtest.BuildCmdAt(t, filepath.Join(root, "lectures/03-offsets-retention/cmd/load-and-watch"))
	member := brewtest.BuildCmdAt(t, filepath.Join(root, "lectures/06-consumer-groups/cmd/member"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adm := env.Admin(t)
	topic := env.FreshTopic(t, "paused", 6)

	t.Run("producer", func(t *testing.T) {
		// A producer that runs when the leader of partition 0 is paused
		// (a paused follower holds acks=all writes only until it leaves
		// the ISR, when the controller fences it: broker.session.timeout.ms,
		// 9 s without a heartbeat).
		t.Setenv(brewkit.EnvTimeout, pausedTimeout.String())
		r := brewtest.Start(t, loadWatch, env.Config.Bootstrap(), "-duration", "2m", "-topic", topic, "-group", "brew.test.paused-load")
		brewtest.Eventually(t, 30*time.Second, "load-and-watch to be writing", func() (bool, string) {
			return strings.Count(r.Stdout(), "--- ") >= 2, r.Output()
		})
		ts, err := adm.ListTopics(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		pause(t, nodes, int(ts[topic].Partitions[0].Leader))
		paused := time.Now()
		code := r.Wait(t, time.Minute)
		ran{stdout: r.Stdout(), stderr: r.Stderr(), code: code, took: time.Since(paused)}.
			check(t, "load-and-watch", outcome{1, []string{brewkit.EnvTimeout + "=" + pausedTimeout.String()}}, 6*pausedTimeout)
	})
	waitHealthy(t, ctx, adm)

	t.Run("consumer", func(t *testing.T) {
		// A member reading when a node that leads partitions it reads, but
		// does not coordinate its group, pauses: joining and committing go
		// on, and the fetches from that node go unanswered.
		// A topic of its own, read to its end before the pause: kgo
		// fetches from a node again only once what it fetched is polled.
		topic := env.FreshTopic(t, "paused-read", 6)
		seed(t, ctx, env, topic)
		group := fmt.Sprintf("brew.test.paused-%d", time.Now().UnixNano())
		t.Setenv(brewkit.EnvTimeout, pausedTimeout.String())
		r := brewtest.Start(t, member, env.Config.Bootstrap(), "-name", "m1", "-group", group, "-topic", topic, "-work", "0s")
		brewtest.Eventually(t, 30*time.Second, "the member to read the 60 orders", func() (bool, string) {
			return strings.Count(r.Stdout(), "processed") >= 60, r.Output()
		})
		coordinators := adm.FindGroupCoordinators(ctx, group)
		if err := coordinators.Error(); err != nil {
			t.Fatalf("finding the coordinator of %s: %v", group, err)
		}
		ts, err := adm.ListTopics(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		paused := int32(-1)
		for _, p := range ts[topic].Partitions.Sorted() {
			if p.Leader != coordinators[group].NodeID {
				paused = p.Leader
				break
			}
		}
		if paused < 0 {
			t.Fatalf("node %d, %s's coordinator, leads every partition of %s: no other node to pause", coordinators[group].NodeID, group, topic)
		}
		pause(t, nodes, int(paused))
		at := time.Now()
		code := r.Wait(t, time.Minute)
		ran{stdout: r.Stdout(), stderr: r.Stderr(), code: code, took: time.Since(at)}.
			check(t, "member", outcome{1, []string{fmt.Sprintf("node %d", paused), "has answered no fetch"}}, 6*pausedTimeout)
	})
}

// seed writes 60 orders to topic.
func seed(t *testing.T, ctx context.Context, env *brewtest.Env, topic string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	var recs []*kgo.Record
	for n := range 60 {
		recs = append(recs, brewkit.NewOrder(rng, int64(n+1), time.Now()).Record(topic))
	}
	if err := env.Client(t).ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// pause pauses node n until the test ends.
func pause(t *testing.T, nodes brewkit.NodeControl, n int) {
	t.Helper()
	if err := nodes.PauseNode(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := nodes.ResumeNode(context.Background(), n); err != nil {
			t.Errorf("resuming node %d: %v", n, err)
		}
	})
}

// waitHealthy waits until every partition has its three replicas in sync.
func waitHealthy(t *testing.T, ctx context.Context, adm *kadm.Client) {
	t.Helper()
	brewtest.Eventually(t, time.Minute, "every ISR whole again", func() (bool, string) {
		ts, err := adm.ListTopics(ctx)
		if err != nil {
			return false, err.Error()
		}
		for _, td := range ts {
			for _, p := range td.Partitions {
				if len(p.ISR) < len(p.Replicas) {
					return false, fmt.Sprintf("%s/%d ISR %v", td.Topic, p.Partition, p.ISR)
				}
			}
		}
		return true, ""
	})
}

// clusterEnv is the environment of a run against cfg's cluster, with
// KAFKA_TIMEOUT=pausedTimeout.
func clusterEnv(cfg brewkit.Config) []string {
	env := []string{brewkit.EnvBootstrap + "=" + cfg.Bootstrap(), brewkit.EnvTimeout + "=" + pausedTimeout.String()}
	if cfg.SASL != "" {
		env = append(env, brewkit.EnvSASL+"="+cfg.SASL, brewkit.EnvUser+"="+cfg.User, brewkit.EnvPassword+"="+cfg.Pass)
	}
	return env
}

package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
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
// KAFKA_TIMEOUT=3s a producer and a consumer end before that, each with
// one line that names what it waited for.
const pausedTimeout = 3 * time.Second

func TestPausedNodeEndsAProducerAndAConsumerAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	nodes := env.NodeControl(t)
	root := repoRoot(t)
	producer := brewtest.BuildCmdAt(t, filepath.Join(root, "lectures/02-topics-partitions/cmd/keyed-producer"))
	member := brewtest.BuildCmdAt(t, filepath.Join(root, "lectures/06-consumer-groups/cmd/member"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adm := env.Admin(t)
	topic := env.FreshTopic(t, "paused", 6)
	seed(t, ctx, env, topic)

	t.Run("producer", func(t *testing.T) {
		pause(t, nodes, 2)
		r := run(t, producer, clusterEnv(env.Config), time.Minute, "-topic", topic, "-n", "60")
		r.check(t, "keyed-producer", outcome{1, []string{brewkit.EnvTimeout + "=" + pausedTimeout.String()}}, 3*pausedTimeout)
	})
	waitHealthy(t, ctx, adm)

	t.Run("consumer", func(t *testing.T) {
		// Pause a node that leads partitions of the topic but does not
		// coordinate the member's group, so that joining works and the
		// fetches from that node go unanswered.
		group := fmt.Sprintf("brew.test.paused-%d", time.Now().UnixNano())
		coordinators := adm.FindGroupCoordinators(ctx, group)
		if err := coordinators.Error(); err != nil {
			t.Fatalf("finding the coordinator of %s: %v", group, err)
		}
		paused := int32(1)
		for coordinators[group].NodeID == paused {
			paused++
		}
		pause(t, nodes, int(paused))
		r := run(t, member, clusterEnv(env.Config), time.Minute, "-name", "m1", "-group", group, "-topic", topic, "-quiet")
		r.check(t, "member", outcome{1, []string{fmt.Sprintf("node %d", paused), "answered no fetch"}}, 4*pausedTimeout)
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

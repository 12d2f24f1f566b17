package brewkit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/sim"
)

// logDirTargets records the nodes DescribeLogDirs requests are written to.
type logDirTargets struct {
	mu    sync.Mutex
	nodes map[int32]bool
}

func (m *logDirTargets) OnBrokerWrite(meta kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key != 35 || err != nil { // 35: DescribeLogDirs
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nodes[meta.NodeID] = true
}

// A topic a create just made is ready only once every broker has it (one
// that has not applied the record yet answers UNKNOWN_TOPIC_OR_PARTITION),
// so EnsureTopics' wait asks each of the three for the partitions' logs.
func TestEnsureTopicsAsksEveryBroker(t *testing.T) {
	c, err := sim.New(sim.Options{})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	targets := &logDirTargets{nodes: map[int32]bool{}}
	hooked, err := brewkit.NewClient(c.Config(), kgo.WithHooks(targets))
	require.NoError(t, err)
	defer hooked.Close()
	require.NoError(t, hooked.Ping(ctx)) // the brokers discovered
	targets.mu.Lock()
	clear(targets.nodes)
	targets.mu.Unlock()

	_, err = brewkit.EnsureTopics(ctx, kadm.NewClient(hooked), brewkit.Topic{Name: "brew.test.everywhere", Partitions: 3, RF: 3, Retention: time.Hour})
	require.NoError(t, err)
	targets.mu.Lock()
	defer targets.mu.Unlock()
	require.Equal(t, map[int32]bool{1: true, 2: true, 3: true}, targets.nodes, "nodes asked for the new topic's logs")
}

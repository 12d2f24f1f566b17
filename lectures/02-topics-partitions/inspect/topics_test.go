package inspect_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/02-topics-partitions/inspect"
)

func TestInspect(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "inspect", 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := env.Client(t)
	for i := range 10 {
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte{byte(i)}, Value: []byte("x")}).FirstErr())
	}
	ts, err := inspect.Describe(ctx, env.Admin(t), topic)
	require.NoError(t, err)
	require.Len(t, ts, 1)
	got := ts[0]
	require.Len(t, got.Partitions, 3)
	require.Equal(t, int64(10), got.Records())
	require.Equal(t, "3600000", got.Configs["retention.ms"], "the topic's own config")
	for _, p := range got.Partitions {
		require.Len(t, p.Replicas, 3)
		require.Contains(t, p.Replicas, p.Leader)
	}
	if env.Simulated {
		return
	}
	// On real Kafka: the same leaders, replicas and ISR as kafka-topics --describe.
	var ours []brewtest.DescribedPartition
	for _, p := range got.Partitions {
		ours = append(ours, brewtest.DescribedPartition{ID: p.ID, Leader: p.Leader, Replicas: p.Replicas, ISR: p.ISR})
	}
	require.Equal(t, env.KafkaTopicsDescribe(t, topic), ours)
}

package brewkit_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

func TestEventRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	e := brewkit.NewOrder(rng, 42, time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	r := e.Record(brewkit.Orders.Name)
	require.Equal(t, "ord-0000042", string(r.Key), "keyed by order id")
	require.Equal(t, "OrderPlaced", string(r.Headers[0].Value))
	got, err := brewkit.DecodeEvent(r)
	require.NoError(t, err)
	require.Equal(t, e, got)

	r.Value = []byte(`{"type":"OrderPlaced","v":2}`)
	_, err = brewkit.DecodeEvent(r)
	require.ErrorContains(t, err, "event version 2")
}

func TestEnsureTopicsIsIdempotent(t *testing.T) {
	env := brewtest.Cluster(t)
	adm := env.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.Catalog...); err != nil {
		t.Fatal(err)
	}
	created, err := brewkit.EnsureTopics(ctx, adm, brewkit.Catalog...)
	require.NoError(t, err)
	require.Empty(t, created, "second run creates nothing")

	td, err := adm.ListTopics(kadm.WithAuthorizedOps(ctx), brewkit.Payments.Name)
	require.NoError(t, err)
	require.Len(t, td[brewkit.Payments.Name].Partitions, int(brewkit.Payments.Partitions))
	rc, err := adm.DescribeTopicConfigs(ctx, brewkit.Payments.Name)
	require.NoError(t, err)
	v, err := rc.On(brewkit.Payments.Name, nil)
	require.NoError(t, err)
	for _, c := range v.Configs {
		if c.Key == "retention.ms" {
			require.Equal(t, "2592000000", c.MaybeValue(), "30 days")
			return
		}
	}
	t.Fatal("no retention.ms on brew.payments.v1")
}

// EndOffsets answers for every partition of a topic created a moment ago.
func TestEndOffsetsOfANewTopic(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "ends", 6)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ends, err := brewkit.EndOffsets(ctx, env.Admin(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ends.Each(func(o kadm.ListedOffset) {
		n++
		if o.Err != nil || o.Offset != 0 {
			t.Errorf("partition %d: offset %d, %v", o.Partition, o.Offset, o.Err)
		}
	})
	if n != 6 {
		t.Fatalf("%d partitions answered, want 6", n)
	}
}

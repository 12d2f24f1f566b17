package brewkit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/sim"
)

// ReadTo reads each partition from where it is told up to the end offsets it
// was given, skips a partition with nothing in between instead of waiting on
// it, and gives up, naming the partitions, when an end is never reached.
func TestReadToReadsUpToTheEndsItWasGiven(t *testing.T) {
	c, err := sim.New(sim.Options{})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	cfg := c.Config()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := brewkit.NewClient(cfg)
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	const topic = "brew.test.read-to"
	_, err = brewkit.EnsureTopics(ctx, adm, brewkit.Topic{Name: topic, Partitions: 3, RF: 3, Retention: time.Hour})
	require.NoError(t, err)
	for i := range 5 { // the sticky partitioner: some partitions stay empty
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte{byte('a' + i)}}).FirstErr())
	}
	ends, err := brewkit.EndOffsets(ctx, adm, topic)
	require.NoError(t, err)
	total := int64(0)
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	require.EqualValues(t, 5, total)

	var all []*kgo.Record
	require.NoError(t, brewkit.ReadTo(ctx, cfg, topic, nil, ends, 10*time.Second, func(r *kgo.Record) { all = append(all, r) }))
	require.Len(t, all, 5, "from the start: every record")

	from := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { from[o.Partition] = o.Offset }) // at the end already
	start := time.Now()
	require.NoError(t, brewkit.ReadTo(ctx, cfg, topic, from, ends, 10*time.Second, func(r *kgo.Record) { t.Errorf("read %v past its end", r) }))
	require.Less(t, time.Since(start), 2*time.Second, "nothing to read: no wait")

	beyond := kadm.ListedOffsets{topic: {}}
	ends.Each(func(o kadm.ListedOffset) {
		o.Offset += 2
		beyond[topic][o.Partition] = o
	})
	err = brewkit.ReadTo(ctx, cfg, topic, nil, beyond, 500*time.Millisecond, func(*kgo.Record) {})
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "partitions [0 1 2] not read to their end within 500ms"), err.Error())
}

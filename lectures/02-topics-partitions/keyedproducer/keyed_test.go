package keyedproducer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/02-topics-partitions/keyedproducer"
	"github.com/brew-course/kafka/lectures/02-topics-partitions/partition"
)

// The broker stores every keyed record where murmur2(key) % partitions says,
// and every event of one order in one partition.
func TestKeyedRecordsLandWherePredicted(t *testing.T) {
	env := brewtest.Cluster(t)
	for _, n := range []int32{3, 6} {
		t.Run(fmt.Sprintf("%d partitions", n), func(t *testing.T) {
			topic := env.FreshTopic(t, "keyed", n)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := keyedproducer.Run(ctx, env.Config, keyedproducer.Config{Topic: topic, Count: 1000, Mode: keyedproducer.ByOrder, Samples: 5})
			require.NoError(t, err)
			var total int64
			for _, c := range res.Counts {
				require.Positive(t, c, "every partition gets keys")
				total += c
			}
			require.Equal(t, int64(1000+2*5), total, "every record read back")
			require.Zero(t, res.Mismatches, "records stored elsewhere than murmur2 predicts")
			require.Len(t, res.Samples, 5)
			for _, s := range res.Samples {
				require.Equal(t, []int32{s.Predicted, s.Predicted, s.Predicted}, s.Stored, "the three events of %s", s.Key)
			}
		})
	}
}

func TestKeylessRecordsSpread(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "keyless", 6)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := keyedproducer.Run(ctx, env.Config, keyedproducer.Config{Topic: topic, Count: 3000, Mode: keyedproducer.NoKey})
	require.NoError(t, err)
	used := 0
	for _, c := range res.Counts {
		if c > 0 {
			used++
		}
	}
	require.GreaterOrEqual(t, used, 2, "keyless records spread over partitions: %v", res.Counts)
	require.Greater(t, res.Batches, 1)
	require.Less(t, res.Batches, 3000/10, "sticky: records go in runs, not one by one")
}

// Kafka's own console producer uses the Java client's default partitioner;
// the murmur2 prediction must match where it put its keyed records too.
func TestJavaClientPlacementMatchesPrediction(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	for _, n := range []int32{3, 6} {
		topic := env.FreshTopic(t, "java", n)
		var lines strings.Builder
		for i := range 200 {
			fmt.Fprintf(&lines, "ord-%07d:{\"n\":%d}\n", i+1, i)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd, err := env.Stand(t).Tool(ctx, "kafka-console-producer", "--topic", topic,
			"--property", "parse.key=true", "--property", "key.separator=:")
		require.NoError(t, err)
		cmd.Stdin = strings.NewReader(lines.String())
		out, err := cmd.CombinedOutput()
		cancel()
		require.NoError(t, err, "kafka-console-producer: %s", out)

		cl := env.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		seen := 0
		ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
		for seen < 200 && ctx.Err() == nil {
			cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
				seen++
				if want := partition.ForKey(r.Key, n); r.Partition != want {
					t.Errorf("%d partitions: the Java client put %s in %d, murmur2 predicts %d", n, r.Key, r.Partition, want)
				}
			})
		}
		cancel()
		require.Equal(t, 200, seen, "%d partitions: records read back", n)
	}
}

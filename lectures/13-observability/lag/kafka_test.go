package lag_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/13-observability/lag"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// On real Kafka, COMMITTED, END and LAG are what Kafka's own
// kafka-consumer-groups --describe prints for the same group, classic and
// KIP-848 alike.
func TestMatchesKafkaConsumerGroups(t *testing.T) {
	for protocol := range protocols {
		t.Run(protocol, func(t *testing.T) {
			env := brewtest.Cluster(t)
			env.RequireReal(t)
			topic := env.FreshTopic(t, "lag-kafka", 3)
			group := topic + ".kitchen"
			produced(t, env, topic, counts, time.Now().Add(-10*time.Minute))
			member(t, env, group, topic, protocol, 14, commit)

			_, g := measure(t, env, group)
			rows := kafkaTool(t, env, "kafka-consumer-groups", "--describe", "--group", group)
			require.Len(t, rows, len(g.Partitions), "one row per partition")
			for _, p := range g.Partitions {
				row := rowOf(t, rows, topic, p.Partition)
				require.Equal(t, strconv.FormatInt(p.Committed, 10), row["CURRENT-OFFSET"], "partition %d", p.Partition)
				require.Equal(t, strconv.FormatInt(p.End, 10), row["LOG-END-OFFSET"], "partition %d", p.Partition)
				require.Equal(t, strconv.FormatInt(p.Lag, 10), row["LAG"], "partition %d", p.Partition)
			}
		})
	}
}

// On real Kafka, a share group's COMMITTED and LAG are the START-OFFSET and
// LAG of Kafka's own kafka-share-groups --describe --offsets.
func TestMatchesKafkaShareGroups(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	topic, group, _, _ := shareGroup(t, env)
	_, g := measure(t, env, group)
	rows := kafkaTool(t, env, "kafka-share-groups", "--describe", "--group", group, "--offsets")
	require.Len(t, rows, len(g.Partitions), "one row per partition")
	for _, p := range g.Partitions {
		row := rowOf(t, rows, topic, p.Partition)
		require.Equal(t, strconv.FormatInt(p.Committed, 10), row["START-OFFSET"], "partition %d", p.Partition)
		require.Equal(t, strconv.FormatInt(p.Lag, 10), row["LAG"], "partition %d", p.Partition)
	}
	require.Equal(t, lag.Share, g.Kind)
}

// kafkaTool runs one of Kafka's tools on the stand and reads its table: a
// header line starting GROUP, then one row per partition.
func kafkaTool(t *testing.T, env *brewtest.Env, tool string, args ...string) []map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, err := env.Stand(t).Tool(ctx, tool, args...)
	require.NoError(t, err)
	out, err := cmd.Output()
	require.NoError(t, err, "%s %v: %s", tool, args, out)
	t.Logf("%s %s:\n%s", tool, strings.Join(args, " "), out)
	var head []string
	var rows []map[string]string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "GROUP":
			head = f
		case head != nil && len(f) >= len(head):
			r := map[string]string{}
			for i, h := range head {
				r[h] = f[i]
			}
			rows = append(rows, r)
		}
	}
	return rows
}

func rowOf(t *testing.T, rows []map[string]string, topic string, partition int32) map[string]string {
	t.Helper()
	for _, r := range rows {
		if r["TOPIC"] == topic && r["PARTITION"] == strconv.Itoa(int(partition)) {
			return r
		}
	}
	t.Fatalf("no row for %s/%d in %v", topic, partition, rows)
	return nil
}

package offsets_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/03-offsets-retention/offsets"
)

// A group that read part of a topic: our lag is log end minus committed, and
// on real Kafka it equals what kafka-consumer-groups --describe prints.
func TestLagMatchesKafkaTool(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "lag", 3)
	group := fmt.Sprintf("brew.test.lag-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prod := env.Client(t)
	for i := range 60 {
		r := &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i)), Value: []byte("order")}
		require.NoError(t, prod.ProduceSync(ctx, r).FirstErr())
	}

	cons := env.Client(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	var read []*kgo.Record
	for len(read) < 20 {
		fs := cons.PollRecords(ctx, 20-len(read))
		require.NoError(t, ctx.Err())
		read = append(read, fs.Records()...)
	}
	require.NoError(t, cons.CommitRecords(ctx, read...))
	cons.Close() // leave the group: the tool then describes a stable, empty group

	ps, err := offsets.Read(ctx, env.Admin(t), group, topic)
	require.NoError(t, err)
	var total, lag int64
	for _, p := range ps {
		require.Equal(t, int64(0), p.Start)
		total += p.End
		if p.Committed >= 0 {
			require.Equal(t, p.End-p.Committed, p.Lag)
			lag += p.Lag
		}
	}
	require.Equal(t, int64(60), total)
	require.Equal(t, int64(60-20), lag+uncommitted(ps), "lag plus what no commit covers is everything unread")
	if env.Simulated {
		return
	}
	tool := kafkaLag(t, env, group, topic)
	for _, p := range ps {
		if p.Committed < 0 {
			// Nothing committed: the tool leaves the partition out (or prints "-").
			require.Contains(t, []string{"", "-"}, tool[p.ID], "partition %d", p.ID)
			continue
		}
		require.Equal(t, strconv.FormatInt(p.Lag, 10), tool[p.ID], "partition %d: our lag vs kafka-consumer-groups", p.ID)
	}
}

func uncommitted(ps []offsets.Partition) int64 {
	var n int64
	for _, p := range ps {
		if p.Committed < 0 {
			n += p.End - p.Start
		}
	}
	return n
}

// kafkaLag runs kafka-consumer-groups --describe and returns LAG per partition.
func kafkaLag(t *testing.T, env *brewtest.Env, group, topic string) map[int32]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, err := env.Stand(t).Tool(ctx, "kafka-consumer-groups", "--describe", "--group", group)
	require.NoError(t, err)
	out, err := cmd.Output()
	require.NoError(t, err, "kafka-consumer-groups: %s", out)
	// GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID
	row := regexp.MustCompile(`(?m)^\S+\s+` + regexp.QuoteMeta(topic) + `\s+(\d+)\s+(\S+)\s+(\d+)\s+(\S+)`)
	lags := map[int32]string{}
	for _, m := range row.FindAllStringSubmatch(string(out), -1) {
		p, _ := strconv.Atoi(m[1])
		lags[int32(p)] = m[4]
	}
	require.NotEmpty(t, lags, "no rows for %s in:\n%s", topic, out)
	return lags
}

// No commit is not a lag of zero: records may wait while the group has
// committed nothing, and Kafka's tool shows "-" there.
func TestLagLine(t *testing.T) {
	for want, ps := range map[string][]offsets.Partition{
		"no commits yet": {{ID: 0, End: 40, Committed: -1, Lag: -1}, {ID: 1, End: 7, Committed: -1, Lag: -1}},
		"total lag 12 (1 of 2 partitions without a commit yet)": {{ID: 0, End: 40, Committed: 28, Lag: 12}, {ID: 1, End: 7, Committed: -1, Lag: -1}},
		"total lag 0": {{ID: 0, End: 40, Committed: 40, Lag: 0}},
	} {
		if got := offsets.LagLine(ps); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

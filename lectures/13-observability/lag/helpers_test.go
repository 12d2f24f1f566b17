package lag_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// produced writes counts[p] records to each partition p of topic, stamped
// a second apart from base on, and returns each record's timestamp as
// Kafka keeps it (milliseconds), by partition and offset.
func produced(t *testing.T, env *brewtest.Env, topic string, counts []int, base time.Time) [][]time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A record stamped long ago would be timed out at once: kgo counts
	// its delivery timeout from the record's timestamp.
	cl := env.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(0))
	stamps := make([][]time.Time, len(counts))
	var recs []*kgo.Record
	for p, n := range counts {
		for i := range n {
			ts := base.Add(time.Duration(p*n+i) * time.Second).Truncate(time.Millisecond)
			stamps[p] = append(stamps[p], ts)
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(p), Key: fmt.Appendf(nil, "ord-%d-%d", p, i), Value: []byte("{}"), Timestamp: ts})
		}
	}
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
	return stamps
}

// Protocols are the consumer group protocols a test runs with.
var protocols = map[string][]kgo.Opt{
	"classic":  nil,
	"consumer": {kgo.Balancers(kgo.StickyBalancer()), kgo.ServerSideBalancer()},
}

// member joins group (protocol: classic or consumer, KIP-848) on topic,
// reads total records and commits the offsets in commit, and stays in the
// group until the test ends: the group is Stable with one member.
func member(t *testing.T, env *brewtest.Env, group, topic, protocol string, total int, commit map[int32]int64) *kgo.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := env.Admin(t)
	t.Cleanup(func() { adm.DeleteGroup(context.Background(), group) }) //nolint:errcheck // best effort, once the member has left
	opts := append([]kgo.Opt{
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.KeepRetryableFetchErrors(),
	}, protocols[protocol]...)
	cl := env.Client(t, opts...)
	var check brewkit.FetchCheck
	for read := 0; read < total; {
		fs, err := check.Poll(ctx, cl, 0)
		require.NoError(t, err, "reading %s as group %s", topic, group)
		read += len(fs.Records())
	}
	offsets := map[string]map[int32]kgo.EpochOffset{topic: {}}
	for p, o := range commit {
		offsets[topic][p] = kgo.EpochOffset{Epoch: -1, Offset: o}
	}
	var cerr error
	cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		cerr = err
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil && cerr == nil {
					cerr = fmt.Errorf("partition %d: %w", rp.Partition, err)
				}
			}
		}
	})
	require.NoError(t, cerr, "committing %v", commit)
	return cl
}

// scrape gets url (an exporter's /metrics), requires a 200, and returns
// its samples (metrics) and its text.
func scrape(t *testing.T, url string) (map[string]string, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	return metrics(string(body)), string(body)
}

// metrics reads Prometheus's text format: each sample's line up to its
// value, and the value.
func metrics(text string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		out[l[:i]] = l[i+1:]
	}
	return out
}

// series is a sample's name and labels as Prometheus's text format writes
// them (labels sorted by name).
func series(name string, labels ...string) string {
	var kv []string
	for i := 0; i < len(labels); i += 2 {
		kv = append(kv, fmt.Sprintf("%s=%q", labels[i], labels[i+1]))
	}
	return name + "{" + strings.Join(kv, ",") + "}"
}

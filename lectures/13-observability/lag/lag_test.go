package lag_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/lectures/13-observability/lag"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// The case most tests measure: 5, 5 and 4 records on partitions 0, 1 and 2,
// stamped from ten minutes ago a second apart; one member read them all and
// committed 3 of 5, all 5, and 0 of 4.
var (
	counts = []int{5, 5, 4}
	commit = map[int32]int64{0: 3, 1: 5, 2: 0}
)

// measure measures group alone.
func measure(t *testing.T, env *brewtest.Env, group string) (lag.Report, lag.Group) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := lag.Measure(ctx, env.Config, lag.Options{Groups: []string{group}})
	require.NoError(t, err)
	g, ok := r.Group(group)
	require.True(t, ok, "group %s in the report: %+v", group, r)
	require.NoError(t, g.Err)
	return r, g
}

// LAG is exact per partition, TIME-LAG is now minus the timestamp of the
// first record not committed, and 0 where nothing lags; the same for a
// classic group and a KIP-848 one.
func TestLagAndTimeLagPerPartition(t *testing.T) {
	for protocol := range protocols {
		t.Run(protocol, func(t *testing.T) {
			env := brewtest.Cluster(t)
			topic := env.FreshTopic(t, "lag", 3)
			group := topic + ".kitchen"
			stamps := produced(t, env, topic, counts, time.Now().Add(-10*time.Minute))
			member(t, env, group, topic, protocol, 14, commit)

			before := time.Now()
			r, g := measure(t, env, group)
			after := time.Now()
			require.Equal(t, lag.Consumer, g.Kind)
			require.Equal(t, protocol, g.Type)
			require.Equal(t, "Stable", g.State)
			require.Equal(t, 1, g.Members)
			require.Len(t, g.Partitions, 3)
			require.True(t, !r.At.Before(before) && !r.At.After(after), "now is taken during the measurement")
			for _, p := range g.Partitions {
				n := int64(counts[p.Partition])
				require.Equal(t, topic, p.Topic)
				require.Equal(t, commit[p.Partition], p.Committed, "partition %d", p.Partition)
				require.Equal(t, n, p.End, "partition %d", p.Partition)
				require.Equal(t, n-commit[p.Partition], p.Lag, "partition %d", p.Partition)
				if p.Lag == 0 {
					require.Zero(t, p.TimeLag, "partition %d: nothing waits", p.Partition)
					continue
				}
				ts := stamps[p.Partition][commit[p.Partition]]
				require.Equal(t, commit[p.Partition], p.OldestOffset, "partition %d", p.Partition)
				require.True(t, ts.Equal(p.Oldest), "partition %d: oldest %s, want the timestamp of offset %d, %s", p.Partition, p.Oldest, p.Committed, ts)
				require.Equal(t, r.At.Sub(ts), p.TimeLag, "partition %d", p.Partition)
				require.InDelta(t, time.Since(ts).Seconds(), p.TimeLag.Seconds(), 1, "partition %d", p.Partition)
				require.Empty(t, p.Note)
			}
			require.Equal(t, int64(6), g.Lag())
			p0, _ := r.Lookup(group, topic, 0)
			require.Equal(t, p0.TimeLag, g.MaxTimeLag(), "partition 0's offset 3 is the oldest waiting")
		})
	}
}

// /metrics serves the series the alert rules use with the measured values.
func TestExporterServesTheSeries(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "lag-exporter", 3)
	group := topic + ".kitchen"
	stamps := produced(t, env, topic, counts, time.Now().Add(-10*time.Minute))
	member(t, env, group, topic, "classic", 14, commit)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := lag.NewCollector(ctx, env.Config, lag.Options{Groups: []string{group}})
	srv := httptest.NewServer(lag.Handler(c))
	defer srv.Close()
	before := time.Now()
	m, body := scrape(t, srv.URL+"/metrics")
	after := time.Now()
	t.Logf("/metrics:\n%s", body)

	labels := func(p int) []string {
		return []string{"group", group, "kind", "consumer", "partition", strconv.Itoa(p), "topic", topic}
	}
	for p, n := range counts {
		lagged := int64(n) - commit[int32(p)]
		require.Equal(t, strconv.FormatInt(lagged, 10), m[series(lag.SeriesLagRecords, labels(p)...)], "partition %d", p)
		secs, err := strconv.ParseFloat(m[series(lag.SeriesLagSeconds, labels(p)...)], 64)
		require.NoError(t, err, "partition %d", p)
		if lagged == 0 {
			require.Zero(t, secs, "partition %d", p)
			continue
		}
		ts := stamps[p][commit[int32(p)]]
		require.GreaterOrEqual(t, secs, before.Sub(ts).Seconds(), "partition %d", p)
		require.LessOrEqual(t, secs, after.Sub(ts).Seconds(), "partition %d", p)
	}
	require.Equal(t, "1", m[series(lag.SeriesMembers, "group", group, "kind", "consumer")])
	require.Equal(t, "0", m[lag.SeriesScrapeErrors])
}

// A scrape whose measurement fails counts as an error, and the exporter
// goes on serving: each later scrape answers, and counts its failure too.
func TestExporterSurvivesFailedScrapes(t *testing.T) {
	env := brewtest.Sim(t) // the simulation leaves one kind of request unanswered
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := lag.NewCollector(ctx, env.Config, lag.Options{Timeout: time.Second})
	var told []error
	c.OnError = func(err error) { told = append(told, err) }
	srv := httptest.NewServer(lag.Handler(c))
	defer srv.Close()
	env.Sim.Hang(kmsg.ListGroups) // no broker lists the groups
	for i := 1; i <= 2; i++ {
		m, _ := scrape(t, srv.URL+"/metrics")
		require.Equal(t, strconv.Itoa(i), m[lag.SeriesScrapeErrors], "scrape %d", i)
		require.Len(t, told, i)
		require.ErrorContains(t, told[i-1], "listing the groups")
	}
}

// With KeepFor, a scrape that cannot measure a group serves its last
// measurement (counting the failure), its time lag aged by the while
// since; once the last measurement is older than KeepFor, the group's
// series are missing as without it.
func TestExporterKeepsTheLastMeasurementForAWhile(t *testing.T) {
	env := brewtest.Sim(t) // the simulation leaves one kind of request unanswered
	topic := env.FreshTopic(t, "lag-keep", 3)
	group := topic + ".kitchen"
	produced(t, env, topic, counts, time.Now().Add(-10*time.Minute))
	commit := map[int32]int64{0: 3, 1: 4, 2: 2}
	member(t, env, group, topic, "classic", 14, commit)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	keep := 2 * time.Second
	c := lag.NewCollector(ctx, env.Config, lag.Options{Groups: []string{group}, Timeout: time.Second, KeepFor: keep})
	srv := httptest.NewServer(lag.Handler(c))
	defer srv.Close()
	labels := []string{"group", group, "kind", "consumer", "partition", "0", "topic", topic}
	first, _ := scrape(t, srv.URL+"/metrics")
	measured := time.Now()
	require.Equal(t, "0", first[lag.SeriesScrapeErrors])
	require.Equal(t, strconv.Itoa(counts[0]-3), first[series(lag.SeriesLagRecords, labels...)])

	env.Sim.Hang(kmsg.ListGroups) // no broker lists the groups: no measurement
	second, _ := scrape(t, srv.URL+"/metrics")
	require.Equal(t, "1", second[lag.SeriesScrapeErrors])
	require.Equal(t, first[series(lag.SeriesLagRecords, labels...)], second[series(lag.SeriesLagRecords, labels...)], "the last measurement's lag")
	require.Equal(t, "1", second[series(lag.SeriesMembers, "group", group, "kind", "consumer")])
	was, err := strconv.ParseFloat(first[series(lag.SeriesLagSeconds, labels...)], 64)
	require.NoError(t, err)
	now, err := strconv.ParseFloat(second[series(lag.SeriesLagSeconds, labels...)], 64)
	require.NoError(t, err)
	require.Greater(t, now, was, "the oldest record waits still, and has aged")

	require.NoError(t, brewkit.Sleep(ctx, keep-time.Since(measured)+100*time.Millisecond))
	third, _ := scrape(t, srv.URL+"/metrics")
	require.Equal(t, "2", third[lag.SeriesScrapeErrors])
	require.NotContains(t, third, series(lag.SeriesLagRecords, labels...), "older than KeepFor: missing")
	require.NotContains(t, third, series(lag.SeriesMembers, "group", group, "kind", "consumer"))
}

// A group whose coordinator does not answer is reported as not measured,
// naming the node, within the measurement's bound; the other groups are
// measured. (A request left unanswered holds every later answer on its
// connection, as on a stuck broker: when kgo happens to ask that node where
// the other group's coordinator is, that group is not measured either. A
// fresh measurement asks afresh.)
func TestCoordinatorThatDoesNotAnswerIsAGroupError(t *testing.T) {
	env := brewtest.Sim(t) // the simulation leaves one kind of request unanswered
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := env.Admin(t)
	coordinator := func(group string) int32 {
		c := adm.FindGroupCoordinators(ctx, group)[group]
		require.NoError(t, c.Err)
		return c.NodeID
	}
	// The fine group's partition must be led by a node other than the
	// stuck group's coordinator: a hung request holds up every later
	// answer on its connection. The simulation places leaders as it
	// likes, so a topic whose partitions all sit on that node is set
	// aside for another.
	var topic, stuck string
	var node int32
	part := int32(-1)
	for try := 0; part < 0; try++ {
		require.Less(t, try, 10, "ten topics, each with every partition led by its group's coordinator")
		topic = env.FreshTopic(t, "lag-stuck", 3)
		produced(t, env, topic, counts, time.Now().Add(-time.Minute))
		stuck = topic + ".stuck"
		member(t, env, stuck, topic, "consumer", 14, commit) // KIP-848: ConsumerGroupDescribe
		node = coordinator(stuck)
		for p := range int32(len(counts)) {
			if env.Sim.LeaderOf(topic, p) != node {
				part = p
				break
			}
		}
	}
	fine := ""
	for i := 0; fine == ""; i++ {
		if g := topic + ".fine" + strconv.Itoa(i); coordinator(g) != node {
			fine = g
		}
	}
	_, err := adm.CommitOffsets(ctx, fine, kadm.OffsetsFromRecords(kgo.Record{Topic: topic, Partition: part, Offset: 1}))
	require.NoError(t, err)

	env.Sim.Hang(kmsg.ConsumerGroupDescribe)
	stuckErr := fmt.Sprintf("no answer within the measurement's time (describing: ConsumerGroupDescribe to node %d: ", node)
	measured := false
	for try := 1; try <= 5 && !measured; try++ {
		start := time.Now()
		r, err := lag.Measure(ctx, env.Config, lag.Options{Groups: []string{stuck, fine}, Timeout: 2 * time.Second})
		took := time.Since(start)
		require.NoError(t, err)
		require.Less(t, took, 2500*time.Millisecond, "bounded by the measurement's timeout")
		var b strings.Builder
		lag.Print(&b, r)
		t.Logf("measurement %d:\n%s", try, b.String())
		g, ok := r.Group(stuck)
		require.True(t, ok)
		require.ErrorContains(t, g.Err, stuckErr)
		require.Contains(t, b.String(), stuck+" (consumer group, KIP-848 protocol): not measured: "+stuckErr)
		g, ok = r.Group(fine)
		require.True(t, ok)
		if g.Err != nil {
			require.ErrorContains(t, g.Err, "no answer within the measurement's time")
			continue
		}
		require.Equal(t, int64(counts[part]-2), g.Lag(), "partition %d: %d records, 2 committed", part, counts[part])
		require.Equal(t, 1, r.Failed())
		measured = true
	}
	require.True(t, measured, "group %s measured in one of 5 measurements", fine)
}

// A committed offset retention has deleted: the lag still counts from it,
// as Kafka's tool does, and the time lag is the oldest kept record's, which
// the partition says.
func TestRetentionDeletedTheOldestUnprocessed(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "lag-retention", 3)
	group := topic + ".kitchen"
	stamps := produced(t, env, topic, counts, time.Now().Add(-10*time.Minute))
	member(t, env, group, topic, "classic", 14, commit)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	deleted, err := env.Admin(t).DeleteRecords(ctx, kadm.Offsets{topic: {2: {Topic: topic, Partition: 2, At: 2}}})
	require.NoError(t, err)
	require.NoError(t, deleted.Error())

	r, g := measure(t, env, group)
	p, ok := r.Lookup(group, topic, 2)
	require.True(t, ok)
	require.Equal(t, int64(0), p.Committed)
	require.Equal(t, int64(4), p.Lag)
	require.Equal(t, int64(2), p.OldestOffset, "the first record kept")
	require.True(t, stamps[2][2].Equal(p.Oldest))
	require.Equal(t, r.At.Sub(stamps[2][2]), p.TimeLag)
	require.Contains(t, p.Note, "offsets 0 to 1 are deleted (retention)")
	var b strings.Builder
	lag.Print(&b, r)
	require.Contains(t, b.String(), group+" "+topic+"/2: offsets 0 to 1 are deleted")
	require.Equal(t, int64(6), g.Lag())
}

// A share group: COMMITTED is its share-partition start offset, LAG what
// the broker reports, TIME-LAG the age of the record at the start offset.
func TestShareGroupStartOffsetAndLag(t *testing.T) {
	env := brewtest.Cluster(t)
	topic, group, stamps, taken := shareGroup(t, env)
	r, g := measure(t, env, group)
	require.Equal(t, lag.Share, g.Kind)
	require.Equal(t, "share", g.Type)
	require.Len(t, g.Partitions, 1)
	p := g.Partitions[0]
	require.Equal(t, topic, p.Topic)
	require.Equal(t, int64(6), p.End)
	require.Equal(t, int64(6-taken), p.Lag, "the records not acknowledged")
	require.LessOrEqual(t, p.Committed, int64(taken), "the start offset may trail the records done")
	require.Equal(t, p.Committed, p.OldestOffset)
	require.True(t, stamps[0][p.Committed].Equal(p.Oldest))
	require.Equal(t, r.At.Sub(stamps[0][p.Committed]), p.TimeLag)
}

// shareGroup makes a share group on a fresh one-partition topic that has
// acknowledged the first records of six (taken of them), and has no
// member left.
func shareGroup(t *testing.T, env *brewtest.Env) (topic, group string, stamps [][]time.Time, taken int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic = env.FreshTopic(t, "lag-share", 1)
	group = topic + ".baristas"
	cl := env.Client(t)
	require.NoError(t, brewkit.SetGroupConfigs(ctx, cl, group, map[string]string{"share.auto.offset.reset": "earliest"}))
	waitGroupConfig(t, ctx, cl, group, "share.auto.offset.reset", "earliest")
	t.Cleanup(func() { env.Admin(t).DeleteGroup(context.Background(), group) }) //nolint:errcheck // best effort
	stamps = produced(t, env, topic, []int{6}, time.Now().Add(-5*time.Minute))

	sc, err := brewkit.NewClient(env.Config, kgo.ShareGroup(group), kgo.ConsumeTopics(topic),
		kgo.ShareMaxRecords(2), kgo.ShareMaxRecordsStrict(), kgo.KeepRetryableFetchErrors())
	require.NoError(t, err)
	var check brewkit.FetchCheck
	for taken == 0 {
		fs, err := check.Poll(ctx, sc, 0)
		require.NoError(t, err)
		for _, r := range fs.Records() {
			require.Equal(t, int64(taken), r.Offset, "records come in order from the start")
			r.Ack(kgo.AckAccept)
			taken++
		}
	}
	require.NoError(t, sc.FlushAcks(ctx))
	sc.Close()
	return topic, group, stamps, taken
}

// waitGroupConfig waits until every broker describes group's config key as
// value: each applies it from the metadata log a moment apart, and a share
// partition starts where its leader's copy says.
func waitGroupConfig(t *testing.T, ctx context.Context, cl *kgo.Client, group, key, value string) {
	t.Helper()
	brokers, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	require.NoError(t, err)
	brewtest.Eventually(t, 30*time.Second, "every broker has "+key+"="+value+" on "+group, func() (bool, string) {
		for _, b := range brokers.Brokers {
			req := kmsg.NewPtrDescribeConfigsRequest()
			res := kmsg.NewDescribeConfigsRequestResource()
			res.ResourceType, res.ResourceName, res.ConfigNames = kmsg.ConfigResourceTypeGroupConfig, group, []string{key}
			req.Resources = append(req.Resources, res)
			resp, err := req.RequestWith(ctx, cl.Broker(int(b.NodeID)))
			if err != nil {
				return false, err.Error()
			}
			found := false
			for _, r := range resp.Resources {
				for _, c := range r.Configs {
					found = found || c.Name == key && c.Value != nil && *c.Value == value
				}
			}
			if !found {
				return false, "node " + strconv.Itoa(int(b.NodeID)) + " has not got it yet"
			}
		}
		return true, ""
	})
}

// A consumer stops: the time lag of what it left grows from one measurement
// to the next; once it is back and has caught up, the time lag is 0.
func TestTimeLagGrowsWhileStoppedAndIsZeroAfterCatchingUp(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "lag-stopped", 1)
	group := topic + ".kitchen"
	produced(t, env, topic, []int{3}, time.Now())
	c := member(t, env, group, topic, "classic", 3, map[int32]int64{0: 3})
	_, g := measure(t, env, group)
	require.Zero(t, g.Lag())
	require.Zero(t, g.MaxTimeLag())
	c.Close() // the kitchen stops

	stamps := produced(t, env, topic, []int{1}, time.Now()) // offset 3
	r1, g1 := measure(t, env, group)
	require.Equal(t, int64(1), g1.Lag())
	require.Equal(t, r1.At.Sub(stamps[0][0]), g1.MaxTimeLag())
	var r2 lag.Report
	brewtest.Eventually(t, 15*time.Second, "the time lag to grow by 2s", func() (bool, string) {
		var g2 lag.Group
		r2, g2 = measure(t, env, group)
		return g2.MaxTimeLag() >= g1.MaxTimeLag()+2*time.Second, lag.Summary(g2)
	})
	p, _ := r2.Lookup(group, topic, 0)
	require.Equal(t, int64(1), p.Lag, "the same record waits")
	require.Equal(t, r2.At.Sub(stamps[0][0]), p.TimeLag)

	member(t, env, group, topic, "classic", 1, map[int32]int64{0: 4}) // back, it reads offset 3 and commits
	brewtest.Eventually(t, 15*time.Second, "lag 0 after catching up", func() (bool, string) {
		_, g := measure(t, env, group)
		return g.Lag() == 0 && g.MaxTimeLag() == 0, lag.Summary(g)
	})
}

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/13-observability/kitchen"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// setup writes 5, 5 and 4 records, stamped ten minutes ago, to a fresh
// topic, and commits 3, 5 and 0 for each group (no member joins).
func setup(t *testing.T, env *brewtest.Env, groups ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topic := env.FreshTopic(t, "lag-cmd", 3)
	cl := env.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(0))
	stamp := time.Now().Add(-10 * time.Minute)
	var recs []*kgo.Record
	for p, n := range []int{5, 5, 4} {
		for range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte("{}"), Timestamp: stamp})
		}
	}
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
	adm := env.Admin(t)
	for _, g := range groups {
		os := kadm.Offsets{}
		for p, at := range map[int32]int64{0: 3, 1: 5, 2: 0} {
			os.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1})
		}
		_, err := adm.CommitOffsets(ctx, g, os)
		require.NoError(t, err)
		t.Cleanup(func() { adm.DeleteGroup(context.Background(), g) }) //nolint:errcheck // best effort
	}
	return topic
}

var age = regexp.MustCompile(`^\d+m\d+s$|^\d+s$`)

// Without -listen, lag prints the table sorted by group, topic and
// partition, then a line per group. A prefix with * takes the groups it
// starts (PRE.b and PRE.a), not the others (PREx.c).
func TestTableSortedWithSummaries(t *testing.T) {
	env := brewtest.Cluster(t)
	pre := fmt.Sprintf("brew.test.lagcmd-%d", time.Now().UnixNano()%1e6)
	topic := setup(t, env, pre+".b", pre+".a", pre+"x.c")
	out, stderr, code := brewtest.RunCmd(t, brewtest.BuildCmd(t), env.Config.Bootstrap(), "-group", pre+".*")
	require.Zero(t, code, stderr)
	t.Logf("\n%s", out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Equal(t, []string{"GROUP", "TOPIC", "PARTITION", "COMMITTED", "END", "LAG", "TIME-LAG"}, strings.Fields(lines[0]))
	want := [][]string{}
	for _, g := range []string{pre + ".a", pre + ".b"} {
		want = append(want,
			[]string{g, topic, "0", "3", "5", "2"},
			[]string{g, topic, "1", "5", "5", "0", "0s"},
			[]string{g, topic, "2", "0", "4", "4"})
	}
	for i, w := range want {
		f := strings.Fields(lines[1+i])
		require.Len(t, f, 7, "row %d: %q", i, lines[1+i])
		require.Equal(t, w, f[:len(w)], "row %d", i)
		if len(w) == 6 {
			require.Regexp(t, age, f[6], "row %d: ten minutes or so", i)
			d, err := time.ParseDuration(f[6])
			require.NoError(t, err)
			require.InDelta(t, 10*time.Minute.Seconds(), d.Seconds(), 60, "row %d", i)
		}
	}
	require.Equal(t, "", lines[7])
	for i, g := range []string{pre + ".a", pre + ".b"} {
		require.Regexp(t, "^"+regexp.QuoteMeta(g+" (consumer group, classic protocol): Empty, 0 members, lag 6 records, oldest unprocessed ")+`10m\d+s$`, lines[8+i])
	}
	require.Len(t, lines, 10, "group %sx.c is not taken by %s.*", pre, pre)
}

// A group named that does not exist is reported as not measured, exit 1,
// and the one line on stderr says why.
func TestUnknownGroupIsNotMeasured(t *testing.T) {
	env := brewtest.Cluster(t)
	out, stderr, code := brewtest.RunCmd(t, brewtest.BuildCmd(t), env.Config.Bootstrap(), "-group", "brew.test.no-such-group")
	require.Equal(t, 1, code, "%s%s", out, stderr)
	require.Equal(t, "brew.test.no-such-group: not measured: no such group: no broker lists it\n", out)
	require.Equal(t, "lag: 1 of 1 groups not measured (above); brew.test.no-such-group: no such group: no broker lists it\n", stderr)
}

// -listen serves /metrics and says where, in one line.
func TestListenServesMetrics(t *testing.T) {
	env := brewtest.Cluster(t)
	group := fmt.Sprintf("brew.test.lagcmd-%d", time.Now().UnixNano()%1e6)
	topic := setup(t, env, group)
	r := brewtest.Start(t, brewtest.BuildCmd(t), env.Config.Bootstrap(), "-listen", "127.0.0.1:0", "-group", group)
	served := regexp.MustCompile(`^serving consumer lag on (http://127\.0\.0\.1:\d+/metrics), measured at each scrape \(Ctrl-C stops\)\n$`)
	var url string
	brewtest.Eventually(t, 20*time.Second, "lag -listen to say where it serves", func() (bool, string) {
		m := served.FindStringSubmatch(r.Stdout())
		if m != nil {
			url = m[1]
		}
		return m != nil, r.Output()
	})
	resp, err := http.Get(url)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Contains(t, string(body), fmt.Sprintf(`brew_group_lag_records{group=%q,kind="consumer",partition="2",topic=%q} 4`, group, topic))
	require.Contains(t, string(body), fmt.Sprintf(`brew_group_members{group=%q,kind="consumer"} 0`, group))
	require.Contains(t, string(body), "brew_lag_scrape_errors_total 0")
	require.Empty(t, r.Stderr())
}

// -watch redraws until Ctrl-C, which ends it at once with 130.
func TestWatchStopsOnCtrlC(t *testing.T) {
	env := brewtest.Cluster(t)
	group := fmt.Sprintf("brew.test.lagcmd-%d", time.Now().UnixNano()%1e6)
	setup(t, env, group)
	res := brewtest.Interrupt(t, brewtest.BuildCmd(t), env.Config.Bootstrap(),
		func(out string) bool {
			return strings.Count(out, "--- ") >= 1 && strings.Contains(out, group+" (consumer group")
		},
		"-watch", "-group", group)
	require.Contains(t, res.Stdout, "consumer lag, measured every 1s (Ctrl-C stops)")
	require.Equal(t, "lag: interrupted\n", res.Stderr)
}

// With no cluster, one line naming the address within 10 s, exit 1.
func TestNoClusterIsOneLine(t *testing.T) {
	start := time.Now()
	out, stderr, code := brewtest.RunCmd(t, brewtest.BuildCmd(t), "127.0.0.1:1")
	require.Less(t, time.Since(start), 11*time.Second)
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	require.Contains(t, stderr, "lag: no Kafka answers at 127.0.0.1:1")
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-group", "*"},
		{"-group", "brew.*.v1"},
		{"-interval", "1ms"},
		{"-timeout", "10ms"},
		{"-watch", "-listen", "127.0.0.1:17080"},
	} {
		brewtest.BadFlag(t, "../lag", args...)
	}
}

// After `make instrumented` the kitchen's group has cooked everything: `make
// lag GROUP=brew.obs.kitchen` shows LAG 0 and TIME-LAG 0s on each partition,
// as the README shows.
func TestLagAfterInstrumentedReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic, drop, err := brewkit.FreshTopic(ctx, env.Admin(t), brewkit.Fresh{Prefix: "brew.obs.orders.", Partitions: 3})
	require.NoError(t, err)
	t.Cleanup(func() { drop(context.Background()) })
	group := topic + ".kitchen"
	t.Cleanup(func() { env.Admin(t).DeleteGroup(context.Background(), group) }) //nolint:errcheck // best effort

	o := kitchen.Defaults
	o.Topic, o.Group, o.For, o.Listen = topic, group, 3*time.Second, ""
	_, err = kitchen.Run(ctx, env.Config, o)
	require.NoError(t, err)

	out, stderr, code := brewtest.RunCmd(t, brewtest.BuildCmd(t), env.Config.Bootstrap(), "-group", group)
	require.Zero(t, code, stderr)
	out = strings.NewReplacer(group, "brew.obs.kitchen", topic, "brew.obs.orders").Replace(out)
	brewtest.MatchesReadme(t, "../../README.md", "lag", out)
	brewtest.MatchesReadme(t, "../../README.en.md", "lag", out)
}

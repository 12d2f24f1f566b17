package stand_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// These scrape the nodes of a real stand of this checkout (native or
// docker), where each serves its metrics on 127.0.0.1:17071-17073; they skip
// elsewhere, and fail under BREW_REQUIRE_REAL=1.

// realStand returns the test's cluster, the stand of this checkout, native
// or docker.
func realStand(t *testing.T) (*brewtest.Env, *stand.Stand) {
	t.Helper()
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	s, err := stand.Find()
	if err != nil {
		t.Fatal(err)
	}
	if f := s.Current(); f != stand.Native && f != stand.Docker {
		msg := fmt.Sprintf("the nodes' metrics need a real stand of this checkout up (this checkout's: %q): make up STAND=native", f)
		if brewtest.RequireRealSet() {
			t.Fatal(msg + " [BREW_REQUIRE_REAL=1]")
		}
		t.Skip(msg)
	}
	return env, s
}

// scrape is one GET /metrics: each series' value by its key
// (name{label="value",...}, labels sorted), and each family's TYPE.
type scrape struct {
	values map[string]float64
	types  map[string]string
	size   int
}

func scrapeNode(ctx context.Context, n int) (scrape, error) {
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", stand.MetricsPort(n))
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return scrape{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return scrape{}, fmt.Errorf("GET %s: %s %v", url, resp.Status, err)
	}
	s := scrape{values: map[string]float64{}, types: map[string]string{}, size: len(body)}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			s.types[f[2]] = f[3]
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		series, value, ok := cutLast(line, " ")
		v, err := strconv.ParseFloat(value, 64)
		if !ok || err != nil {
			return scrape{}, fmt.Errorf("GET %s: cannot read %q", url, line)
		}
		s.values[parseSeries(series)] = v
	}
	return s, nil
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// parseSeries turns name{b="2",a="1"} into its key, name{a="1",b="2"}; the
// exporter's label values here hold no commas or quotes.
func parseSeries(s string) string {
	name, rest, ok := strings.Cut(s, "{")
	if !ok {
		return name
	}
	labels := map[string]string{}
	for _, kv := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			labels[k] = strings.Trim(v, `"`)
		}
	}
	return seriesKey(name, labels)
}

// typeOf is the TYPE of a series' family: a counter's may be named with or
// without its _total.
func (s scrape) typeOf(name string) string {
	if t, ok := s.types[name]; ok {
		return t
	}
	return s.types[strings.TrimSuffix(name, "_total")]
}

func scrapeAll(t *testing.T, ctx context.Context) map[int]scrape {
	t.Helper()
	out := map[int]scrape{}
	for _, n := range stand.Nodes {
		s, err := scrapeNode(ctx, n)
		if err != nil {
			t.Fatalf("node %d serves no metrics: %v", n, err)
		}
		out[n] = s
	}
	return out
}

func TestNodesServeTheMetricsContract(t *testing.T) {
	env, _ := realStand(t)
	checkNodeMetrics(t, env)
}

// TestDockerNodesServeTheMetricsContract is the same on the docker stand, in
// its tier (which runs the stand module's Docker tests).
func TestDockerNodesServeTheMetricsContract(t *testing.T) {
	dockerStand(t)
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	checkNodeMetrics(t, env)
}

// checkNodeMetrics: each node serves every series of the contract, of its
// type, and no other kafka_ series; one node, the quorum leader, is the
// active controller; records written show in the nodes' counters.
func checkNodeMetrics(t *testing.T, env *brewtest.Env) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	contract := metricsContract()
	want := map[string]bool{}
	for _, m := range contract {
		want[m.key()] = true
	}
	// A topic with a replica of each of its 3 partitions on every node.
	topic := env.FreshTopic(t, "metrics", 3)
	before := scrapeAll(t, ctx)
	const records = 30
	cl := env.Client(t)
	for i := range records {
		r := &kgo.Record{Topic: topic, Key: []byte(brewkit.OrderID(int64(i))), Value: []byte("latte")}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	after := scrapeAll(t, ctx)

	for _, n := range stand.Nodes {
		s := after[n]
		t.Logf("node %d: %d series, %d bytes", n, len(s.values), s.size)
		for _, m := range contract {
			if _, ok := s.values[m.key()]; !ok {
				t.Errorf("node %d does not serve %s", n, m.key())
			} else if got := s.typeOf(m.Name); got != m.Type {
				t.Errorf("node %d: %s is a %s, want a %s", n, m.Name, got, m.Type)
			}
		}
		for key := range s.values {
			if strings.HasPrefix(key, "kafka_") && !want[key] {
				t.Errorf("node %d serves %s, which is not in the contract", n, key)
			}
		}
		if s.size > 64<<10 {
			t.Errorf("node %d: a scrape of %d bytes; the exporter reads only the contract's MBeans", n, s.size)
		}
		// Every node holds a replica of each of the topic's partitions.
		if got := s.values["kafka_server_replicamanager_partitioncount"]; got < 3 {
			t.Errorf("node %d: partitioncount %v, want at least the topic's 3", n, got)
		}
		if got := s.values["kafka_controller_kafkacontroller_globalpartitioncount"]; got < 3 {
			t.Errorf("node %d: globalpartitioncount %v, want at least the topic's 3", n, got)
		}
	}
	var in, bytesIn, leaders float64
	for _, n := range stand.Nodes {
		in += after[n].values["kafka_server_brokertopicmetrics_messagesin_total"] - before[n].values["kafka_server_brokertopicmetrics_messagesin_total"]
		bytesIn += after[n].values["kafka_server_brokertopicmetrics_bytesin_total"] - before[n].values["kafka_server_brokertopicmetrics_bytesin_total"]
		leaders += after[n].values["kafka_server_replicamanager_leadercount"]
	}
	if in < records || bytesIn <= 0 {
		t.Errorf("after %d records the leaders counted %v messages in and %v bytes in, want at least %d and some", records, in, bytesIn, records)
	}
	if leaders < 3 {
		t.Errorf("the nodes lead %v partitions together, want at least the topic's 3", leaders)
	}

	// One active controller, the quorum leader. Leadership rarely moves
	// while no node stops, but it may between two reads: read again.
	cl2 := env.Client(t)
	brewtest.Eventually(t, 30*time.Second, "exactly one node is the active controller, the quorum leader", func() (bool, string) {
		q, err := brewkit.DescribeQuorum(ctx, cl2)
		if err != nil {
			return false, err.Error()
		}
		var sum float64
		var active []int
		for _, n := range stand.Nodes {
			s, err := scrapeNode(ctx, n)
			if err != nil {
				return false, err.Error()
			}
			v := s.values["kafka_controller_kafkacontroller_activecontrollercount"]
			sum += v
			if v == 1 {
				active = append(active, n)
			}
		}
		return sum == 1 && len(active) == 1 && int32(active[0]) == q.LeaderID,
			fmt.Sprintf("active controller count %v in all, on nodes %v; quorum leader %d", sum, active, q.LeaderID)
	})
}

package kitchen

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// A run cooks every order it placed, and kprom's counts agree with the
// service's own: every placed order was one produced record, and the
// kitchen fetched at least as many.
func TestRunCooksWhatItPlacedAndTheMetricsAgree(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic, drop, err := brewkit.FreshTopic(ctx, env.Admin(t), brewkit.Fresh{Prefix: "brew.obs.kitchen.", Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop(context.Background()) })

	o := Defaults
	o.Topic, o.Group, o.For, o.Listen = topic, topic, 2*time.Second, ""
	r, err := Run(ctx, env.Config, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Placed < 20 || r.Failed != 0 || r.Cooked != r.Placed {
		t.Fatalf("placed %d, failed %d, cooked %d: want about 40 placed, none failed, all cooked", r.Placed, r.Failed, r.Cooked)
	}
	got := map[string]float64{}
	for _, m := range r.Metrics {
		got[m.Name] = m.Value
	}
	for name, want := range map[string]float64{
		"orders_placed_total":            float64(r.Placed),
		"orders_cooked_total":            float64(r.Cooked),
		"produce_records_total":          float64(r.Placed),
		"produce_errors_total":           0,
		"buffered_produce_records_total": 0,
	} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
	if got["fetch_records_total"] < float64(r.Cooked) {
		t.Errorf("fetch_records_total = %v, fewer than the %d cooked", got["fetch_records_total"], r.Cooked)
	}
	if b := got["produce_batches_total"]; b < 1 || b > got["produce_records_total"] {
		t.Errorf("produce_batches_total = %v, want 1 to %v", b, got["produce_records_total"])
	}
}

// /metrics serves the service's series and kprom's, labelled by client.
func TestMetricsEndpointServesBothClients(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic, drop, err := brewkit.FreshTopic(ctx, env.Admin(t), brewkit.Fresh{Prefix: "brew.obs.kitchen.", Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop(context.Background()) })
	m := NewMetrics()
	k, err := StartKitchen(ctx, env.Config, m, topic, topic, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	till, err := StartTill(ctx, env.Config, m, topic, 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	brewtest.Eventually(t, 20*time.Second, "the kitchen cooks 10 orders", func() (bool, string) {
		return k.Cooked() >= 10, ""
	})
	till.Stop()
	srv := httpGet(t, m)
	till.Close()
	if err := k.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`brew_orders_placed_total `,
		`brew_produce_records_total{client_id="brew-till"`,
		`brew_fetch_records_total{client_id="brew-kitchen"`,
		`brew_connects_total{client_id="brew-kitchen"`,
	} {
		if !strings.Contains(srv, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func httpGet(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := &recorder{header: http.Header{}}
	req, _ := http.NewRequest("GET", "/metrics", nil)
	m.Handler().ServeHTTP(rec, req)
	b, _ := io.ReadAll(strings.NewReader(rec.body.String()))
	return string(b)
}

type recorder struct {
	header http.Header
	body   strings.Builder
	code   int
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

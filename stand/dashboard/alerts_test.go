package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// With Prometheus up the dashboard shows its alerts, firing before pending,
// each with the label that says which node or group; with none answering,
// no alerts line at all.
func TestAlertsFromPrometheus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/alerts" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"status":"success","data":{"alerts":[
			{"labels":{"alertname":"BrewUnderReplicatedPartitions","severity":"ticket"},"state":"pending"},
			{"labels":{"alertname":"BrewNodeDown","node":"3","job":"kafka"},"state":"firing"}]}}`))
	}))
	defer srv.Close()
	defer func(u string) { PrometheusURL = u }(PrometheusURL)

	PrometheusURL = srv.URL
	c := &collector{}
	if err := c.alerts(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := Render(c.snap, 100, 0, false)
	want := "alerts  FIRING BrewNodeDown{node=3}   pending BrewUnderReplicatedPartitions\n"
	if !strings.Contains(got, want) {
		t.Errorf("no line %q in:\n%s", want, got)
	}

	PrometheusURL = "http://127.0.0.1:1" // nothing listens there
	c = &collector{}
	if err := c.alerts(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := Render(c.snap, 100, 0, false); strings.Contains(got, "alerts") {
		t.Errorf("an alerts line without Prometheus:\n%s", got)
	}
	c.snap.Alerts = []Alert{}
	if got := Render(c.snap, 100, 0, false); !strings.Contains(got, "alerts  none (Prometheus)") {
		t.Errorf("no quiet alerts line with Prometheus up and nothing firing:\n%s", got)
	}
}

package stand_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// These start the services beside the cluster for real, on this machine,
// installing them on first use: BREW_SERVICES_TEST=1 (or the real tier's
// BREW_REQUIRE_REAL=1) runs them; elsewhere they skip. Each starts its
// services holding the stand lock shared, and stops them holding it
// exclusive (a lecture's test may be using them), then checks the port is
// free. A service that ran before the test is started again at its end.

func servicesStand(t *testing.T) *stand.Stand {
	t.Helper()
	if os.Getenv("BREW_SERVICES_TEST") != "1" && !brewtest.RequireRealSet() {
		t.Skip("starts PostgreSQL, Prometheus and Kafka Connect on this machine: BREW_SERVICES_TEST=1 go test -run Service (or make test-real)")
	}
	s, err := stand.Find()
	if err != nil {
		t.Fatal(err)
	}
	s.Out = logWriter{t}
	return s
}

// lock takes the stand lock shared until the test ends; the returned
// function takes it exclusive.
func serviceLock(t *testing.T, s *stand.Stand) (exclusive func()) {
	t.Helper()
	l, err := s.OpenLock()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), brewtest.LockWait)
	defer cancel()
	if err := l.Shared(ctx); err != nil {
		t.Fatal(err)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), brewtest.LockWait)
		defer cancel()
		if err := l.Exclusive(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// start starts the services named and, when the test ends, stops each one
// (checking its port is free) under the exclusive lock, and starts again
// those that ran before. The tests that call it stop services other tests
// use, so their names end in Alone: the test tiers run them where nothing
// else holds the stand (among the others, one waited 52 s for the lock in
// a CI run, and every test that came after it waited for it).
func startServices(t *testing.T, s *stand.Stand, names ...string) {
	t.Helper()
	exclusive := serviceLock(t, s)
	before := servicesRunning(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	began := time.Now()
	if err := s.StartServices(ctx, names...); err != nil {
		t.Fatal(err)
	}
	t.Logf("%v ready in %s", names, time.Since(began).Round(100*time.Millisecond))
	t.Cleanup(func() {
		exclusive()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := s.StopServices(ctx, names...); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			svc, _ := stand.LookupService(n)
			if conn, err := net.DialTimeout("tcp", svc.Addr(), time.Second); err == nil {
				conn.Close()
				t.Errorf("%s stopped, but %s still answers", n, svc.Addr())
			}
			if st := serviceStatus(t, s, n); st == nil || st.Running {
				t.Errorf("%s stopped: status %+v, want listed as stopped", n, st)
			}
			if before[n] {
				if err := s.StartServices(ctx, n); err != nil {
					t.Errorf("starting %s again, as it ran before the test: %v", n, err)
				}
			}
		}
	})
	for _, n := range names {
		if st := serviceStatus(t, s, n); st == nil || !st.Running || !st.Ready {
			t.Fatalf("%s: status %+v, want running and ready", n, st)
		}
	}
}

func servicesRunning(t *testing.T, s *stand.Stand) map[string]bool {
	out := map[string]bool{}
	for _, st := range s.ServiceStatuses(context.Background()) {
		out[st.Name] = st.Running
	}
	return out
}

func serviceStatus(t *testing.T, s *stand.Stand, name string) *stand.ServiceStatus {
	for _, st := range s.ServiceStatuses(context.Background()) {
		if st.Name == name {
			return &st
		}
	}
	return nil
}

func TestPostgresServiceHasLogicalDecodingAlone(t *testing.T) {
	s := servicesStand(t)
	startServices(t, s, "postgres")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	psql := func(sql string) string {
		t.Helper()
		out, err := s.Psql(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := psql("SHOW wal_level"); got != "logical" {
		t.Fatalf("wal_level %q, want logical", got)
	}
	if got := psql("SHOW listen_addresses"); got != "127.0.0.1" {
		t.Errorf("listen_addresses %q, want 127.0.0.1 only", got)
	}
	slot := fmt.Sprintf("brew_test_%d", rand.Uint32())
	if got := psql("SELECT slot_name FROM pg_create_logical_replication_slot('" + slot + "', 'pgoutput')"); got != slot {
		t.Fatalf("created slot %q, want %q", got, slot)
	}
	count := "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + slot + "'"
	if got := psql(count); got != "1" {
		t.Fatalf("slot %s is not listed: %q", slot, got)
	}
	psql("SELECT pg_drop_replication_slot('" + slot + "')")
	if got := psql(count); got != "0" {
		t.Fatalf("slot %s is still listed after its drop: %q", slot, got)
	}
	// Idempotent: a second start finds it running and leaves it be.
	pid := serviceStatus(t, s, "postgres").Process
	if err := s.StartServices(ctx, "postgres"); err != nil {
		t.Fatal(err)
	}
	if again := serviceStatus(t, s, "postgres").Process; again != pid {
		t.Errorf("a second start restarted it: %s, then %s", pid, again)
	}
}

func TestPrometheusServiceIsReadyAlone(t *testing.T) {
	s := servicesStand(t)
	startServices(t, s, "prometheus")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if code := getJSON(t, ctx, "http://127.0.0.1:19090/-/ready", nil); code != http.StatusOK {
		t.Fatalf("GET /-/ready: %d", code)
	}
	// It runs the course's configuration: the nodes' metrics ports are its
	// targets (up while a real stand runs: TestPrometheusScrapesEveryNodeAlone),
	// found a moment after ready.
	brewtest.Eventually(t, 20*time.Second, "Prometheus scrapes 127.0.0.1:17071-17073 and itself", func() (bool, string) {
		var targets struct {
			Data struct {
				ActiveTargets []struct {
					ScrapeURL string `json:"scrapeUrl"`
				} `json:"activeTargets"`
			} `json:"data"`
		}
		getJSON(t, ctx, "http://127.0.0.1:19090/api/v1/targets", &targets)
		var urls []string
		for _, tg := range targets.Data.ActiveTargets {
			urls = append(urls, tg.ScrapeURL)
		}
		for _, port := range []int{17071, 17072, 17073, 19090} {
			if !strings.Contains(strings.Join(urls, " "), fmt.Sprintf("127.0.0.1:%d/metrics", port)) {
				return false, fmt.Sprintf("no target on port %d yet: %v", port, urls)
			}
		}
		return true, ""
	})
	if out, err := exec.CommandContext(ctx, "promtool", "check", "config", s.PrometheusConfig()).CombinedOutput(); err != nil {
		t.Errorf("promtool check config: %v\n%s", err, out)
	}
}

// On a real stand Prometheus scrapes every node's metrics: job kafka's three
// targets are up, labelled with their node, and one node is the active
// controller.
func TestPrometheusScrapesEveryNodeAlone(t *testing.T) {
	s := servicesStand(t)
	if f := s.Current(); f != stand.Native && f != stand.Docker {
		msg := fmt.Sprintf("the nodes serve metrics on a real stand (this checkout's: %q): make up STAND=native", f)
		if brewtest.RequireRealSet() {
			t.Fatal(msg + " [BREW_REQUIRE_REAL=1]")
		}
		t.Skip(msg)
	}
	startServices(t, s, "prometheus")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A target's health is known after its first scrape (every 5 s).
	brewtest.Eventually(t, time.Minute, "job kafka's targets 127.0.0.1:17071-17073 are up", func() (bool, string) {
		var targets struct {
			Data struct {
				ActiveTargets []struct {
					ScrapeURL string            `json:"scrapeUrl"`
					Health    string            `json:"health"`
					LastError string            `json:"lastError"`
					Labels    map[string]string `json:"labels"`
				} `json:"activeTargets"`
			} `json:"data"`
		}
		getJSON(t, ctx, "http://127.0.0.1:19090/api/v1/targets", &targets)
		var up, seen []string
		for _, tg := range targets.Data.ActiveTargets {
			if tg.Labels["job"] != "kafka" {
				continue
			}
			seen = append(seen, fmt.Sprintf("node %s %s %s %s", tg.Labels["node"], tg.ScrapeURL, tg.Health, tg.LastError))
			if tg.Health == "up" && tg.ScrapeURL == fmt.Sprintf("http://127.0.0.1:%d/metrics", stand.MetricsPort(atoi(tg.Labels["node"]))) {
				up = append(up, tg.Labels["node"])
			}
		}
		slices.Sort(up)
		return slices.Equal(up, []string{"1", "2", "3"}), strings.Join(seen, "; ")
	})
	brewtest.Eventually(t, 30*time.Second, "Prometheus sees one active controller", func() (bool, string) {
		var res struct {
			Data struct {
				Result []struct {
					Value []any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		getJSON(t, ctx, "http://127.0.0.1:19090/api/v1/query?query=sum(kafka_controller_kafkacontroller_activecontrollercount)", &res)
		if len(res.Data.Result) != 1 || len(res.Data.Result[0].Value) != 2 {
			return false, fmt.Sprintf("%+v", res.Data.Result)
		}
		return res.Data.Result[0].Value[1] == "1", fmt.Sprintf("sum %v", res.Data.Result[0].Value[1])
	})
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func TestConnectServiceValidatesADebeziumConnectorAlone(t *testing.T) {
	s := servicesStand(t)
	if f := s.Current(); f != stand.Native && f != stand.Docker {
		msg := fmt.Sprintf("connect needs a real stand up (this checkout's: %q): make up STAND=native", f)
		if brewtest.RequireRealSet() {
			t.Fatal(msg + " [BREW_REQUIRE_REAL=1]")
		}
		t.Skip(msg)
	}
	startServices(t, s, "postgres", "connect")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var plugins []struct {
		Class, Version string
	}
	getJSON(t, ctx, "http://127.0.0.1:18083/connector-plugins", &plugins)
	found := false
	for _, p := range plugins {
		found = found || p.Class == stand.PostgresConnector && p.Version == stand.DebeziumVersion
	}
	if !found {
		t.Fatalf("the worker lists %+v, want %s %s", plugins, stand.PostgresConnector, stand.DebeziumVersion)
	}

	config := map[string]string{
		"name":              "brew-validate",
		"connector.class":   stand.PostgresConnector,
		"database.hostname": "127.0.0.1",
		"database.port":     "15432",
		"database.user":     "postgres",
		"database.dbname":   "postgres",
		"topic.prefix":      "brewtest",
		"plugin.name":       "pgoutput",
	}
	if n, errs := validateConnector(t, ctx, config); n != 0 {
		t.Fatalf("the connector's config against the running postgres: %d errors %v", n, errs)
	}
	// The validation bites: a port where no PostgreSQL listens is an error.
	config["database.port"] = "1"
	if n, errs := validateConnector(t, ctx, config); n == 0 {
		t.Fatalf("a config with no PostgreSQL behind it validated: %v", errs)
	}

	// The worker's internal topics are in the course cluster, replicated 3 times.
	cl, err := brewkit.NewClient(brewkit.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	td, err := kadm.NewClient(cl).ListTopics(ctx, stand.ConnectConfigsTopic, stand.ConnectOffsetsTopic, stand.ConnectStatusesTopic)
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{stand.ConnectConfigsTopic, stand.ConnectOffsetsTopic, stand.ConnectStatusesTopic} {
		d, ok := td[topic]
		if !ok || d.Err != nil || len(d.Partitions) == 0 {
			t.Errorf("topic %s: %+v", topic, d)
			continue
		}
		for _, p := range d.Partitions {
			if len(p.Replicas) != 3 {
				t.Errorf("%s-%d has replicas %v, want 3", topic, p.Partition, p.Replicas)
			}
		}
	}
}

// validate asks the worker to validate a Debezium PostgreSQL connector's
// config; it returns the error count and the errors.
func validateConnector(t *testing.T, ctx context.Context, config map[string]string) (int, []string) {
	t.Helper()
	body, _ := json.Marshal(config)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut,
		"http://127.0.0.1:18083/connector-plugins/"+stand.PostgresConnector+"/config/validate", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		ErrorCount int `json:"error_count"`
		Configs    []struct {
			Value struct {
				Name   string   `json:"name"`
				Errors []string `json:"errors"`
			} `json:"value"`
		} `json:"configs"`
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT .../config/validate: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	var errs []string
	for _, c := range v.Configs {
		for _, e := range c.Value.Errors {
			errs = append(errs, c.Value.Name+": "+e)
		}
	}
	return v.ErrorCount, errs
}

// get GETs url, decodes its JSON into v (unless nil) and returns the status.
func getJSON(t *testing.T, ctx context.Context, url string, v any) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
	return resp.StatusCode
}

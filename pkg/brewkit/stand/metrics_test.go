package stand

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The node's JVM loads the metrics agent on its own port, before its main
// class; a tool run from the same jars does not (it would try to bind a
// node's port, and a JVM whose agent fails does not start).
func TestOnlyTheNodesLoadTheMetricsAgent(t *testing.T) {
	t.Setenv(EnvInstance, "") // the contract ports: instance 0, whatever the tier set
	s := &Stand{Root: t.TempDir()}
	d := &native{s: s}
	args := d.nodeCmd(2, "/agent.jar").Args
	agent := "-javaagent:/agent.jar=127.0.0.1:17072:" + filepath.Join(s.Root, "stand", "metrics", "jmx-exporter.yml")
	i := slices.Index(args, agent)
	require.GreaterOrEqual(t, i, 0, "node 2's JVM: %v", args)
	require.Less(t, i, slices.Index(args, "kafka.Kafka"), "a JVM option comes before the main class")

	require.NoError(t, os.MkdirAll(d.lib(), 0o755))
	for _, jar := range []string{kafkaJar, toolsJar} {
		require.NoError(t, os.WriteFile(filepath.Join(d.lib(), jar), nil, 0o644))
	}
	tool, err := d.tool(t.Context(), 0, "kafka-topics", []string{"--list"})
	require.NoError(t, err)
	class, err := s.JavaClass(t.Context(), "org.apache.kafka.tools.ProducerPerformance")
	require.NoError(t, err)
	for _, cmd := range [][]string{tool.Args, class.Args} {
		require.False(t, slices.ContainsFunc(cmd, func(a string) bool { return strings.HasPrefix(a, "-javaagent") }), "a tool's JVM: %v", cmd)
	}
}

// Without Maven the agent comes straight from Maven Central, and takes its
// place only when its digest is the one pinned.
func TestMetricsAgentIsDownloadedAndChecked(t *testing.T) {
	jar := []byte("PK agent")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(jar) }))
	defer srv.Close()
	defer func(u, sum string) { jmxExporterURL, jmxExporterSHA256 = u, sum }(jmxExporterURL, jmxExporterSHA256)
	jmxExporterURL = srv.URL + "/" + jmxExporterJar
	t.Setenv("PATH", t.TempDir()) // no mvn

	s := &Stand{Root: t.TempDir()}
	jmxExporterSHA256 = strings.Repeat("0", 64)
	_, err := s.FetchMetricsAgent(t.Context())
	require.ErrorContains(t, err, "not the jar Maven Central serves")
	require.NoFileExists(t, s.MetricsAgent(), "a jar that fails its check is not kept")
	entries, _ := os.ReadDir(filepath.Dir(s.MetricsAgent()))
	require.Empty(t, entries, "nor anything of the attempt")

	sum := sha256.Sum256(jar)
	jmxExporterSHA256 = hex.EncodeToString(sum[:])
	path, err := s.FetchMetricsAgent(t.Context())
	require.NoError(t, err)
	require.Equal(t, filepath.Join(s.Root, ".stand", "metrics", "jmx_prometheus_javaagent-"+JMXExporterVersion+".jar"), path)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, jar, got)

	srv.Close() // once there, it is not fetched again
	_, err = s.FetchMetricsAgent(t.Context())
	require.NoError(t, err)
}

// status shows where each node's metrics answer, and "-" where nothing does.
func TestStatusShowsTheMetricsPorts(t *testing.T) {
	st := Status{Flavor: Native, Leader: 1, Nodes: []NodeStatus{
		{ID: 1, Addr: "127.0.0.1:19092", Running: true, Process: "pid 10", Registered: true, Metrics: "127.0.0.1:17071"},
		{ID: 2, Addr: "127.0.0.1:19093", Process: "pid 11"},
	}}
	var b strings.Builder
	st.Print(&b)
	require.Contains(t, b.String(), "METRICS")
	require.Regexp(t, `(?m)^1 .*registered +127\.0\.0\.1:17071$`, b.String())
	require.Regexp(t, `(?m)^2 .*stopped +- +-$`, b.String())
}

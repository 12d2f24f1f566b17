package stand

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// Each node serves its metrics for Prometheus (lecture 13) through the
// Prometheus JMX exporter's Java agent: inside the node's JVM, it reads the
// MBeans stand/metrics/jmx-exporter.yml names and answers GET /metrics on
// 127.0.0.1:MetricsPort(n). The agent's jar comes from Maven Central on first
// use, into .stand/metrics (never into git); the docker stand mounts that
// folder and stand/metrics into its containers.

// MetricsPort is node n's metrics port for Prometheus (17071-17073).
func MetricsPort(n int) int { return Port(17070 + n) }

// JMXExporterVersion is the release of io.prometheus.jmx:jmx_prometheus_javaagent
// the nodes run: the newest 1.x Maven Central serves where the course is
// built (1.1 and later are not there). stand/docker-compose.yml names its jar
// too; stand's TestComposeNodesServeMetrics holds it to this line.
const JMXExporterVersion = "1.0.1"

// jmxExporterSHA256 is the jar's digest, as Maven Central served it: a jar
// fetched by any route must match it before a node loads it. A variable, as
// jmxExporterURL is.
var jmxExporterSHA256 = "7d61f737fd661610ccc14aea79764faa1ea94a340cbc8f0029b3d2edea3d80c1"

const jmxExporterJar = "jmx_prometheus_javaagent-" + JMXExporterVersion + ".jar"

// jmxExporterURL is the jar on Maven Central, for a machine without Maven
// (the docker stand needs only Docker otherwise). A variable, so tests can
// serve it themselves.
var jmxExporterURL = "https://repo.maven.apache.org/maven2/io/prometheus/jmx/jmx_prometheus_javaagent/" +
	JMXExporterVersion + "/" + jmxExporterJar

// MetricsAgent is the JMX exporter agent's jar in .stand/metrics.
func (s *Stand) MetricsAgent() string { return s.shared("metrics", jmxExporterJar) }

// MetricsConfig is the exporter's configuration, in the repository: which
// MBeans become which series (the names lecture 13's alert rules use).
func (s *Stand) MetricsConfig() string {
	return filepath.Join(s.Root, "stand", "metrics", "jmx-exporter.yml")
}

// javaAgent is the JVM option that makes a node serve its metrics on addr
// (host:port, or a port alone for every address of a container).
func javaAgent(jar, addr, config string) string {
	return "-javaagent:" + jar + "=" + addr + ":" + config
}

// FetchMetricsAgent makes sure the exporter's jar is in .stand/metrics and
// returns its path: Maven copies it from Maven Central (through the user's
// Maven settings) when Maven is installed, else it is downloaded from there
// directly. Either way its digest is checked before it takes its place.
func (s *Stand) FetchMetricsAgent(ctx context.Context) (string, error) {
	jar := s.MetricsAgent()
	if isFile(jar) {
		return jar, nil
	}
	dir := filepath.Dir(jar)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Fetched into a folder of its own, then renamed: a jar in place is whole.
	tmp, err := os.MkdirTemp(dir, "fetch-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	s.say("stand: downloading the Prometheus JMX exporter %s (the nodes' metrics agent) into %s (once)...", JMXExporterVersion, s.rel(dir))
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if _, err := exec.LookPath("mvn"); err == nil {
		err = mavenCopy(ctx, "io.prometheus.jmx:jmx_prometheus_javaagent:"+JMXExporterVersion, tmp)
	} else {
		err = download(ctx, jmxExporterURL, filepath.Join(tmp, jmxExporterJar))
	}
	if err != nil {
		return "", fmt.Errorf("fetching the JMX exporter agent: %w", err)
	}
	got := filepath.Join(tmp, jmxExporterJar)
	if err := checkSHA256(got, jmxExporterSHA256); err != nil {
		return "", err
	}
	if err := os.Rename(got, jar); err != nil {
		return "", err
	}
	return jar, nil
}

// mavenCopy copies one artifact (group:artifact:version) into dir; Maven
// needs no pom for it.
func mavenCopy(ctx context.Context, artifact, dir string) error {
	cmd := exec.CommandContext(ctx, "mvn", "-q", "-B",
		"org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy",
		"-Dartifact="+artifact, "-DoutputDirectory="+dir)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("maven could not copy %s (%v); its output:\n%s", artifact, err, out)
	}
	return nil
}

// download GETs url into path.
func download(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("downloading %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("downloading %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("downloading %s: %w", url, err)
	}
	return f.Close()
}

func checkSHA256(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s has SHA-256 %s, want %s: not the jar Maven Central serves", filepath.Base(path), got, want)
	}
	return nil
}

// metricsAddr is node n's metrics address on this machine.
func metricsAddr(n int) string { return "127.0.0.1:" + strconv.Itoa(MetricsPort(n)) }

// listening reports whether something accepts a connection on addr: a
// quick look for status, not a scrape (a paused node would not answer one).
func listening(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

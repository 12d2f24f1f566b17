package stand_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// These run on the docker stand when it is up (the docker tier of .ci/run,
// on the stand-in image where no image can be pulled); elsewhere they skip,
// and under BREW_REQUIRE_DOCKER=1 they fail instead.

func dockerStand(t *testing.T) *stand.Stand {
	t.Helper()
	s, err := stand.Find()
	if err != nil {
		t.Fatal(err)
	}
	if s.Current() != stand.Docker {
		if os.Getenv("BREW_REQUIRE_DOCKER") == "1" {
			t.Fatalf("the docker stand is not up (stand: %q) [BREW_REQUIRE_DOCKER=1]", s.Current())
		}
		t.Skip("needs the docker stand: make up STAND=docker (make test-docker)")
	}
	// The stand lock comes with the stand's address: without it, these
	// tests would stop and wipe containers under other tests' feet.
	if os.Getenv(brewkit.EnvBootstrap) == "" {
		t.Skip("drives the docker stand that is up, and takes the stand lock only with KAFKA_BOOTSTRAP set: make test-docker")
	}
	return s
}

// Address-bound settings differ by design between the stands (hostnames and
// ports of the compose network against loopback ports); all else must not.
var addressBound = map[string]bool{
	"listeners": true, "advertised.listeners": true, "listener.security.protocol.map": true,
	"inter.broker.listener.name": true, "controller.quorum.voters": true, "log.dirs": true,
	// The key stores: .stand/tls on the host, mounted on /etc/brew/tls.
	"ssl.keystore.location": true, "ssl.truststore.location": true,
}

// TestDockerNodesDeriveTheNativeSettings reads the server.properties each
// running container derived from the compose environment (Kafka's own
// KafkaDockerWrapper does it, in the official image and in the stand-in)
// and compares it with stand/native/nodeN.properties.
func TestDockerNodesDeriveTheNativeSettings(t *testing.T) {
	dockerStand(t)
	brewtest.Cluster(t) // the stand lock, shared: no other test stops a container meanwhile
	for n := 1; n <= 3; n++ {
		out, err := exec.Command("docker", "exec", fmt.Sprintf("kafka-%d", n), "cat", "/opt/kafka/config/server.properties").Output()
		if err != nil {
			t.Fatalf("reading kafka-%d's server.properties: %v", n, err)
		}
		tmp := filepath.Join(t.TempDir(), "server.properties")
		if err := os.WriteFile(tmp, out, 0o644); err != nil {
			t.Fatal(err)
		}
		derived := loadProperties(t, tmp)
		native := loadProperties(t, fmt.Sprintf("native/node%d.properties", n))
		for k, v := range native {
			if addressBound[k] {
				continue
			}
			if derived[k] != v {
				t.Errorf("node %d %s: docker %q, native %q", n, k, derived[k], v)
			}
		}
		for k, v := range derived {
			if _, ok := native[k]; !ok && !addressBound[k] {
				t.Errorf("node %d: docker sets %s=%s, which the native stand does not", n, k, v)
			}
		}
		if derived["ssl.keystore.location"] != fmt.Sprintf("/etc/brew/tls/node%d.p12", n) || derived["ssl.truststore.location"] != "/etc/brew/tls/ca.pem" {
			t.Errorf("node %d key stores: %q, %q", n, derived["ssl.keystore.location"], derived["ssl.truststore.location"])
		}
		if derived["advertised.listeners"] != fmt.Sprintf("INTERNAL://kafka-%d:9092,EXTERNAL://127.0.0.1:%d,SECURE://127.0.0.1:%d,MTLS://127.0.0.1:%d", n, 19091+n, 19191+n, 19291+n) {
			t.Errorf("node %d advertised.listeners: %q", n, derived["advertised.listeners"])
		}
	}
}

// brewstand runs a verb through scripts/brewstand, as make does.
func brewstand(t *testing.T, s *stand.Stand, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.Root, "scripts", "brewstand"), args...)
	cmd.Dir = s.Root
	out, err := cmd.CombinedOutput()
	t.Logf("brewstand %s:\n%s", strings.Join(args, " "), out)
	return string(out), err
}

func mustBrewstand(t *testing.T, s *stand.Stand, args ...string) string {
	t.Helper()
	out, err := brewstand(t, s, args...)
	if err != nil {
		t.Fatalf("brewstand %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// dockerLogs is everything node n's container printed since it was created.
func dockerLogs(t *testing.T, n int) string {
	t.Helper()
	out, err := exec.Command("docker", "logs", fmt.Sprintf("kafka-%d", n)).CombinedOutput()
	if err != nil {
		t.Fatalf("docker logs kafka-%d: %v", n, err)
	}
	return string(out)
}

// inspect is docker's answer about node n's container, in a template.
func inspect(t *testing.T, n int, format string) string {
	t.Helper()
	out, err := exec.Command("docker", "inspect", "-f", format, fmt.Sprintf("kafka-%d", n)).Output()
	if err != nil {
		t.Fatalf("docker inspect kafka-%d: %v", n, err)
	}
	return strings.TrimSpace(string(out))
}

// containerState is docker's view of a node's container: running, exited
// (with its exit code) or paused.
func containerState(t *testing.T, n int) string {
	return inspect(t, n, "{{.State.Status}} {{.State.ExitCode}}")
}

// TestDockerVerbsAlone drives every stand verb on the docker stand and checks
// what Docker and the cluster say after each.
func TestDockerVerbsAlone(t *testing.T) {
	s := dockerStand(t)
	env := brewtest.Cluster(t)
	env.NodeControl(t) // the stand lock, exclusive, and the stand restored afterwards

	st := mustBrewstand(t, s, "status")
	for _, want := range []string{"stand: docker (real Kafka " + stand.KafkaVersion + ")", "cluster: Kafka " + stand.KafkaMinor + " (metadata.version ", "image: ", "running, container kafka-3", "quorum leader (active controller): node "} {
		if !strings.Contains(st, want) {
			t.Errorf("status lacks %q", want)
		}
	}
	if os.Getenv(stand.EnvImage) != "" && os.Getenv(stand.EnvImage) != stand.OfficialImage {
		if !strings.Contains(st, "STAND-IN") {
			t.Errorf("status does not say the image is a stand-in")
		}
		if doc := mustBrewstand(t, s, "doctor"); !strings.Contains(doc, "image       "+os.Getenv(stand.EnvImage)+": a STAND-IN") {
			t.Errorf("doctor does not say the image is a stand-in")
		}
	}
	if dir := strings.TrimSpace(mustBrewstand(t, s, "datadir", "2")); dir != "/var/lib/kafka/data" {
		t.Errorf("datadir 2: %q", dir)
	}
	if logs := mustBrewstand(t, s, "logs", "1"); !strings.Contains(logs, "kafka-1") {
		t.Errorf("logs 1 shows no line of kafka-1")
	}

	// stop-node: SIGTERM, a controlled shutdown (exit 143); start-node.
	mustBrewstand(t, s, "stop-node", "3")
	if got := containerState(t, 3); got != "exited 143" {
		t.Errorf("after stop-node 3: container %s, want exited 143 (SIGTERM)", got)
	}
	if st := mustBrewstand(t, s, "status"); !strings.Contains(st, "3     127.0.0.1:19094  stopped") {
		t.Errorf("status does not show node 3 stopped")
	}
	mustBrewstand(t, s, "start-node", "3")
	if got := containerState(t, 3); got != "running 0" {
		t.Errorf("after start-node 3: container %s", got)
	}
	// The restart keeps its data: the image's start script says so.
	brewtest.Eventually(t, time.Minute, "node 3 restarted on its data", func() (bool, string) {
		logs := dockerLogs(t, 3)
		return strings.Count(logs, "Storage already formatted: keeping its data") >= 1, "no such line yet"
	})

	// stop-node -kill: SIGKILL (exit 137).
	mustBrewstand(t, s, "stop-node", "-kill", "2")
	if got := containerState(t, 2); got != "exited 137" {
		t.Errorf("after stop-node -kill 2: container %s, want exited 137 (SIGKILL)", got)
	}
	mustBrewstand(t, s, "start-node", "2")

	// pause-node / resume-node: docker pause.
	mustBrewstand(t, s, "pause-node", "1")
	if got := containerState(t, 1); !strings.HasPrefix(got, "paused") {
		t.Errorf("after pause-node 1: container %s", got)
	}
	if st := mustBrewstand(t, s, "status"); !strings.Contains(st, "PAUSED") {
		t.Errorf("status does not show node 1 paused")
	}
	mustBrewstand(t, s, "resume-node", "1")
	if got := containerState(t, 1); got != "running 0" {
		t.Errorf("after resume-node 1: container %s", got)
	}
	mustBrewstand(t, s, "up", "-stand", "docker") // waits until all three are registered again

	// tool with stdin: the console producer reads records from a pipe.
	topic := env.FreshTopic(t, "docker-tool", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prod := exec.CommandContext(ctx, filepath.Join(s.Root, "scripts", "brewstand"), "tool", "kafka-console-producer", "--topic", topic)
	prod.Dir = s.Root
	prod.Stdin = strings.NewReader("latte\nflat white\ncortado\n")
	if out, err := prod.CombinedOutput(); err != nil {
		t.Fatalf("console producer: %v\n%s", err, out)
	}
	got := mustBrewstand(t, s, "tool", "kafka-console-consumer", "--topic", topic, "--from-beginning", "--max-messages", "3", "--timeout-ms", "30000")
	for _, want := range []string{"latte", "flat white", "cortado"} {
		if !strings.Contains(got, want) {
			t.Errorf("console consumer did not read %q back", want)
		}
	}
}

// nodeAddress is node n's address in the compose network.
func nodeAddress(t *testing.T, n int) string {
	return inspect(t, n, "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}")
}

// TestDockerNodesKeepTheirAddressesAlone stops nodes 1 and 2 and starts 2
// first. With addresses handed out as containers start, node 2 took the one
// node 1 had, node 3 kept sending node 1's Raft requests there and fell
// behind the metadata log for good. Each node has its own address in
// docker-compose.yml: it keeps it, and a topic created after the restarts
// has its log on every node.
func TestDockerNodesKeepTheirAddressesAlone(t *testing.T) {
	s := dockerStand(t)
	env := brewtest.Cluster(t)
	env.NodeControl(t) // the stand lock, exclusive, and the stand restored afterwards

	for n := 1; n <= 3; n++ {
		if got, want := nodeAddress(t, n), fixedAddress(n); got != want {
			t.Fatalf("kafka-%d is at %s, want %s (docker-compose.yml's ipv4_address)", n, got, want)
		}
	}
	mustBrewstand(t, s, "stop-node", "1")
	mustBrewstand(t, s, "stop-node", "2")
	mustBrewstand(t, s, "start-node", "2")
	mustBrewstand(t, s, "start-node", "1")
	for n := 1; n <= 3; n++ {
		if got, want := nodeAddress(t, n), fixedAddress(n); got != want {
			t.Errorf("after the restarts kafka-%d is at %s, want %s", n, got, want)
		}
	}
	// FreshTopic waits until every replica of every partition has its log.
	env.FreshTopic(t, "docker-addresses", 3)
	if logs := dockerLogs(t, 3); strings.Contains(logs, "didn't match the receiver's replica key") {
		t.Errorf("node 3 got Raft requests meant for another node")
	}
}

// otherInstance matches the compose projects of the stand's other instances.
var otherInstance = regexp.MustCompile(`^brew-i[0-9]$`)

// TestDockerDownResetUpAlone takes the stand down, wipes it and brings it back:
// the named volumes go with reset, no anonymous volume is left, and the
// nodes format their storage again.
func TestDockerDownResetUpAlone(t *testing.T) {
	s := dockerStand(t)
	env := brewtest.Cluster(t)
	env.NodeControl(t)
	// down stops the services beside the cluster too: the ones that ran
	// (the tier's PostgreSQL and Connect) run again after, for the tests
	// that come later.
	var ran []string
	for _, st := range s.ServiceStatuses(context.Background()) {
		if st.Running {
			ran = append(ran, st.Name)
		}
	}
	if len(ran) > 0 {
		t.Cleanup(func() { mustBrewstand(t, s, append([]string{"services", "up"}, ran...)...) })
	}

	mustBrewstand(t, s, "down")
	if out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=com.docker.compose.project=brew").Output(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("containers left after down: %q %v", out, err)
	}
	if _, err := brewstand(t, s, "status"); err == nil {
		t.Errorf("status succeeded with no stand up")
	}
	mustBrewstand(t, s, "up", "-stand", "docker")
	mustBrewstand(t, s, "reset")
	// Every volume but those of other instances of the stand (compose
	// projects brew-iN, which the docker tier runs beside this test).
	out, err := exec.Command("docker", "volume", "ls", "--format", `{{.Name}} {{.Label "com.docker.compose.project"}}`).Output()
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, project, _ := strings.Cut(line, " ")
		if name != "" && !otherInstance.MatchString(project) {
			left = append(left, name)
		}
	}
	if len(left) > 0 {
		t.Errorf("volumes left after reset: %s", strings.Join(left, " "))
	}
	up := mustBrewstand(t, s, "up", "-stand", "docker")
	if !strings.Contains(up, "docker is ready") {
		t.Errorf("up after reset did not report ready")
	}
	if logs := dockerLogs(t, 1); !strings.Contains(logs, "Formatting metadata directory /var/lib/kafka/data") {
		t.Errorf("node 1 did not format its storage after reset")
	}
}

package brewtest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// envCluster picks where tests get their cluster: "containers" starts the
// course cluster in Docker containers with testcontainers-go, so `go test
// ./...` in a lecture needs only Docker, no `make up`. Unset: KAFKA_BOOTSTRAP,
// else the in-process simulation.
const envCluster = "BREW_CLUSTER"

// inContainers reports whether BREW_CLUSTER=containers.
func inContainers() bool { return os.Getenv(envCluster) == "containers" }

// The containers live in a helper process, `brewcontainers serve`, so that
// testcontainers-go and its Docker client stay out of every module that
// imports brewtest (pkg/brewcontainers is a module of its own). The helper
// removes the cluster when its stdin closes: when this test process ends,
// pass, fail, panic or Ctrl-C. One cluster serves all tests of the process.
var containers struct {
	once      sync.Once
	bootstrap string
	err       error
	stdin     io.WriteCloser // held open for the life of the test process
}

// containersBootstrap starts the helper once and returns the cluster's
// KAFKA_BOOTSTRAP. Under `make test-containers` the helper already runs
// around `go test` and KAFKA_BOOTSTRAP is set: then it is used as it is.
func containersBootstrap(t testing.TB) string {
	t.Helper()
	if b := os.Getenv(brewkit.EnvBootstrap); b != "" {
		return b
	}
	containers.once.Do(func() {
		containers.bootstrap, containers.err = startContainers()
		if containers.err == nil {
			// Programs the tests start as processes reach the same cluster.
			os.Setenv(brewkit.EnvBootstrap, containers.bootstrap)
		}
	})
	if containers.err != nil {
		t.Fatalf("BREW_CLUSTER=containers: %v", containers.err)
	}
	return containers.bootstrap
}

func startContainers() (string, error) {
	s, err := stand.Find()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "run", "./pkg/brewcontainers/cmd/brewcontainers", "serve")
	cmd.Dir = s.Root
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("starting brewcontainers: %w", err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- strings.TrimSpace(sc.Text())
		}
		close(lines)
		io.Copy(io.Discard, stdout)
	}()
	select {
	case b, ok := <-lines:
		if !ok || b == "" {
			cmd.Wait()
			return "", fmt.Errorf("brewcontainers serve ended without a cluster (is a Docker engine running? see its output above)")
		}
		containers.stdin = stdin
		go cmd.Wait()
		return b, nil
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		return "", fmt.Errorf("brewcontainers serve printed no cluster address within 5 minutes")
	}
}

// noStandInContainers fails or skips a test that needs the stand's node
// control or Kafka's tools, which a testcontainers cluster does not offer.
func noStandInContainers(t testing.TB) {
	t.Helper()
	if inContainers() {
		t.Skip("stops, starts or pauses nodes, or runs Kafka's tools: needs the course stand (`make test-real`), not BREW_CLUSTER=containers")
	}
}

// contractPorts rewrites, under BREW_CLUSTER=containers, the client ports of
// the containers' nodes (free ports chosen at start) to the course's 19092,
// 19093 and 19094, node by node, so that a README block showing the stand's
// addresses compares the rest of the output value for value.
//
// On another instance of the stand (BREW_STAND_INSTANCE), every port of the
// instance's block reads as the contract port it stands for.
func contractPorts(t testing.TB, out string) string {
	if n := stand.Instance(); n != 0 && !inContainers() {
		if rewritten := stand.ContractPorts(n, out); rewritten != out {
			t.Logf("%s=%d: the instance's ports read as the contract's for the README comparison", stand.EnvInstance, n)
			return rewritten
		}
		return out
	}
	if !inContainers() {
		return out
	}
	addrs := strings.Split(os.Getenv(brewkit.EnvBootstrap), ",")
	if len(addrs) != 3 {
		return out
	}
	var pairs []string
	for i, a := range addrs {
		_, port, ok := strings.Cut(strings.TrimSpace(a), ":")
		if !ok {
			return out
		}
		pairs = append(pairs, port, fmt.Sprint(stand.ClientPort(i+1)))
	}
	r := strings.NewReplacer(pairs...)
	if rewritten := r.Replace(out); rewritten != out {
		t.Logf("BREW_CLUSTER=containers: the nodes' ports %s read as 19092-19094 for the README comparison", os.Getenv(brewkit.EnvBootstrap))
		return rewritten
	}
	return out
}

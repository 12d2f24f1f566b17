package main

import (
	"strings"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// An argument is a usage error: exit 2, one line naming it.
func TestBadArgs(t *testing.T) {
	_, stderr, code := brewtest.RunCmd(t, brewtest.BuildCmdAt(t, "../features"), "127.0.0.1:1", "describe")
	if code != 2 || !strings.HasPrefix(stderr, `features: unexpected argument "describe"`) {
		t.Errorf("exit %d, want 2 and a line naming the argument; stderr:\n%s", code, stderr)
	}
}

// No cluster: one line naming the address and how to start a stand.
func TestNoCluster(t *testing.T) {
	_, stderr, code := brewtest.RunCmd(t, brewtest.BuildCmdAt(t, "../features"), "127.0.0.1:1")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != 1 || len(lines) != 1 || !strings.Contains(stderr, "127.0.0.1:1") || !strings.Contains(stderr, "make up") {
		t.Errorf("exit %d, want 1 and one line naming the address and `make up`; stderr:\n%s", code, stderr)
	}
}

// make features on the test's cluster: the table on real Kafka, as the
// README shows it, the simulation's note on kfake; exit 0, nothing on stderr.
func TestFeaturesReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	out, stderr, code := brewtest.RunCmd(t, brewtest.BuildCmd(t), env.Config.Bootstrap())
	if code != 0 || strings.TrimSpace(stderr) != "" {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	want := "FEATURE "
	if env.Simulated {
		want = "the simulation reports no features"
	}
	if !strings.Contains(out, want) {
		t.Errorf("no %q in:\n%s", want, out)
	}
	t.Logf("\n%s", out)
	if !env.Simulated {
		brewtest.MatchesReadme(t, "../../README.md", "features", out)
	}
}

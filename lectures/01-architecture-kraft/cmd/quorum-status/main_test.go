package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/01-architecture-kraft/quorum"
)

func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "quorum-status")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func runBin(t *testing.T, bin string, env []string, args ...string) (stdout, stderr string, code int, took time.Duration) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code, took
}

func TestUsageAndErrors(t *testing.T) {
	bin := build(t)

	_, stderr, code, _ := runBin(t, bin, nil, "-h")
	if code != 0 || !strings.Contains(stderr, "usage: quorum-status") {
		t.Fatalf("-h: exit %d, stderr:\n%s", code, stderr)
	}
	_, _, code, _ = runBin(t, bin, nil, "-nope")
	if code != 2 {
		t.Fatalf("unknown flag: exit %d, want 2", code)
	}
	// Nothing listens on port 1: one clear line, exit 1, well within 10 s.
	_, stderr, code, took := runBin(t, bin, []string{"KAFKA_BOOTSTRAP=127.0.0.1:1"})
	if code != 1 {
		t.Fatalf("no cluster: exit %d, want 1; stderr:\n%s", code, stderr)
	}
	if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; lines != 1 {
		t.Fatalf("no cluster: want one line, got %d:\n%s", lines, stderr)
	}
	for _, want := range []string{"127.0.0.1:1", "make up"} {
		if !strings.Contains(stderr, want) {
			t.Fatalf("no cluster: %q missing from %q", want, stderr)
		}
	}
	if took > 10*time.Second {
		t.Fatalf("no cluster: took %s, want under 10 s", took)
	}
}

// make run: the program's whole output has the shape the README shows, on
// whichever cluster the tier provides.
func TestOutputMatchesReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	bin := build(t)
	stdout, stderr, code, _ := runBin(t, bin, []string{"KAFKA_BOOTSTRAP=" + env.Config.Bootstrap()})
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	block := "quorum-status"
	if env.Simulated {
		block = "quorum-status-embedded"
	}
	brewtest.MatchesReadme(t, "../../README.md", block, stdout, quorum.AnyRole)
}

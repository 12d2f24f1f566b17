package main

import (
	"strings"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

func TestUsageAndErrors(t *testing.T) {
	bin := brewtest.BuildCmd(t)

	_, stderr, code := brewtest.RunCmd(t, bin, "", "-h")
	if code != 0 || !strings.Contains(stderr, "usage: quorum-status") {
		t.Fatalf("-h: exit %d, stderr:\n%s", code, stderr)
	}
	_, _, code = brewtest.RunCmd(t, bin, "", "-nope")
	if code != 2 {
		t.Fatalf("unknown flag: exit %d, want 2", code)
	}
	// Nothing listens on port 1: one clear line, exit 1, well within 10 s.
	start := time.Now()
	_, stderr, code = brewtest.RunCmd(t, bin, "127.0.0.1:1")
	took := time.Since(start)
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
	bin := brewtest.BuildCmd(t)
	stdout, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap())
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	block := "quorum-status"
	if env.Simulated {
		block = "quorum-status-embedded"
	}
	brewtest.MatchesReadme(t, "../../README.md", block, stdout)
}

// Ctrl-C stops the live view within a second: exit status 130, one line.
func TestInterruptStopsCleanly(t *testing.T) {
	env := brewtest.Cluster(t)
	bin := brewtest.BuildCmd(t)
	res := brewtest.Interrupt(t, bin, env.Config.Bootstrap(), func(out string) bool {
		return strings.Contains(out, "RaftLeader")
	}, "-watch", "-interval", "200ms")
	if res.Stderr != "quorum-status: interrupted\n" {
		t.Fatalf("after Ctrl-C, stderr: %q", res.Stderr)
	}
}

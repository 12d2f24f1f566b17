package main

import (
	"strings"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

func TestOutputMatchesReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	bin := brewtest.BuildCmd(t)
	out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-create", "-topic", "brew.orders.v1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	brewtest.MatchesReadme(t, "../../README.md", "inspect", out)
	if _, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-topic", "brew.nope.v1"); code != 1 || !strings.Contains(stderr, "brew.nope.v1") {
		t.Fatalf("missing topic: exit %d, %s", code, stderr)
	}
}

package main

import (
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// make run's first screen, piped: the table the README shows.
func TestOnceMatchesReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	bin := brewtest.BuildCmd(t)
	out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-once")
	if code != 0 {
		t.Fatalf("watch-isr -once: exit %d: %s", code, stderr)
	}
	brewtest.MatchesReadme(t, "../../README.md", "watch-isr", out, brewtest.WithoutSimNote)

	if _, _, code := brewtest.RunCmd(t, bin, "", "-nope"); code != 2 {
		t.Fatalf("unknown flag: exit %d, want 2", code)
	}
}

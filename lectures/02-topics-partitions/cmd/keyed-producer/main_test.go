package main

import (
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

func TestOutputMatchesReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "keyed", 6)
	bin := brewtest.BuildCmd(t)
	out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-topic", topic, "-n", "1000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	brewtest.MatchesReadme(t, "../../README.md", "keyed-producer", out)

	if _, _, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-key", "customer"); code != 2 {
		t.Fatalf("unknown key mode: exit %d, want 2", code)
	}
}

// A reader that cannot fetch says why, in one line, instead of waiting.
func TestFetchErrorIsReported(t *testing.T) {
	brewtest.FetchFails(t, 20*time.Second, brewtest.BuildCmd(t), "-n", "10")
}

package main

import (
	"strings"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

func TestOutputMatchesReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	bin := brewtest.BuildCmd(t)
	out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if env.Simulated {
		// kfake refuses with the bare error code; real Kafka adds the reason
		// the README shows, which the real tier checks.
		if !strings.Contains(out, "shrinking to 2 partitions: INVALID_PARTITIONS (the broker gave no reason)\n") {
			t.Fatalf("no refusal in:\n%s", out)
		}
	} else {
		brewtest.MatchesReadme(t, "../../README.md", "grow", out)
	}
	if _, _, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-from", "6", "-to", "3"); code != 2 {
		t.Fatalf("-to below -from: exit %d, want 2", code)
	}
}

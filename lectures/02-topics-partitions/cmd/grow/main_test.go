package main

import (
	"regexp"
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
	normalize := []func(string) string{brewtest.Names, brewtest.Bars}
	if env.Simulated {
		// kfake refuses with the bare error code; real Kafka adds its reason,
		// which the README shows and the real tier checks.
		normalize = append(normalize, func(s string) string { return brokerReason.ReplaceAllString(s, "") })
	}
	brewtest.MatchesReadme(t, "../../README.md", "grow", out, normalize...)
	if _, _, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap(), "-from", "6", "-to", "3"); code != 2 {
		t.Fatalf("-to below -from: exit %d, want 2", code)
	}
}

var brokerReason = regexp.MustCompile(` \(The topic .*\)`)

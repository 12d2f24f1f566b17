package main

import (
	"strings"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// A consumer that cannot fetch ends the promo with the reason, in one line.
func TestFetchErrorIsReported(t *testing.T) {
	brewtest.FetchFails(t, 30*time.Second, brewtest.BuildCmd(t), "-duration", "3s", "-partitions", "1")
}

// Ctrl-C mid-promo: exit 130 within a second, one line.
func TestInterrupt(t *testing.T) {
	env := brewtest.Cluster(t)
	res := brewtest.Interrupt(t, brewtest.BuildCmd(t), env.Config.Bootstrap(), func(out string) bool {
		return strings.Contains(out, "lag")
	}, "-duration", "30s", "-partitions", "1")
	if res.Stderr != "promo: interrupted\n" {
		t.Fatalf("stderr after Ctrl-C: %q", res.Stderr)
	}
}

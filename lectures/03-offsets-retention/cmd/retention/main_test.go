package main

import (
	"strings"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// Ctrl-C while it watches the log start: exit 130 within a second.
func TestInterrupt(t *testing.T) {
	env := brewtest.Cluster(t)
	res := brewtest.Interrupt(t, brewtest.BuildCmd(t), env.Config.Bootstrap(), func(out string) bool {
		return strings.Contains(out, "watching the log start offset")
	})
	if res.Stderr != "retention: interrupted\n" {
		t.Fatalf("stderr after Ctrl-C: %q", res.Stderr)
	}
}

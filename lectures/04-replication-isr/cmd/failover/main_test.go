package main

import (
	"strings"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// Ctrl-C mid-drill leaves a node stopped: the program says so and how to
// bring it back, and exits 130 within a second. The drill stops nodes of
// the stand this checkout started, so this runs on the real tier.
func TestInterruptSaysWhatItLeavesBehindAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	env.NodeControl(t) // holds the stand lock; starts the stopped node again at the end
	topic := env.FreshTopic(t, "failover-interrupt", 6)
	res := brewtest.Interrupt(t, brewtest.BuildCmd(t), env.Config.Bootstrap(), func(out string) bool {
		return strings.Contains(out, "stopped (SIGTERM)")
	}, "-topic", topic, "-steady", "3s")
	want := "failover: interrupted; nodes the drill stopped stay stopped: start them with `make restore`\n"
	if !strings.HasSuffix(res.Stderr, want) {
		t.Fatalf("stderr after Ctrl-C ends with %q, want %q", res.Stderr[max(0, len(res.Stderr)-200):], want)
	}
}

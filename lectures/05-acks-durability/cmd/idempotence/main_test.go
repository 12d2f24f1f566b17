package main

import (
	"strings"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// Ctrl-C while a follower is paused: the program resumes it on its way out,
// exits 130 within a second, and says how to make sure.
func TestInterruptResumesThePausedNodeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	env.NodeControl(t) // holds the stand lock; resumes anything left paused
	res := brewtest.Interrupt(t, brewtest.BuildCmd(t), env.Config.Bootstrap(), func(out string) bool {
		return strings.Contains(out, " paused (") // (SIGSTOP) on native, (docker pause) on docker
	})
	if !strings.HasSuffix(res.Stderr, "idempotence: interrupted; if a node is still paused, `make restore` resumes it\n") {
		t.Fatalf("stderr after Ctrl-C:\n%s", res.Stderr)
	}
	if !strings.Contains(res.Stderr, "resumed") {
		t.Fatalf("the paused node was not resumed on the way out:\n%s", res.Stderr)
	}
}

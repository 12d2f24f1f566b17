package main

import (
	"context"
	"strings"
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
	brewtest.MatchesReadme(t, "../../README.md", "watch-isr", brewtest.WithoutSimNote(out))

	if _, _, code := brewtest.RunCmd(t, bin, "", "-nope"); code != 2 {
		t.Fatalf("unknown flag: exit %d, want 2", code)
	}
}

// make stop-broker N=2 while the watch runs piped: the change lines the README
// shows, and Ctrl-C ends the watch. Offline replicas are real Kafka's only.
func TestStopBrokerChangesMatchReadmeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	nodes := env.NodeControl(t)
	topic := env.FreshTopic(t, "watch-isr", 6) // a fresh topic: each node leads two partitions
	bin := brewtest.BuildCmd(t)
	stopped := false
	res := brewtest.Interrupt(t, bin, env.Config.Bootstrap(), func(out string) bool {
		if !stopped && strings.Contains(out, "under-replicated: 0 of 6") {
			stopped = true
			if err := nodes.StopNode(context.Background(), 2, false); err != nil {
				t.Fatal(err)
			}
		}
		return stopped && strings.Contains(out, "offline [] -> [2]")
	}, "-topic", topic, "-create=false", "-interval", "200ms")
	_, changes, _ := strings.Cut(res.Stdout, "under-replicated: 0 of 6   under min ISR (acks=all fails): 0 of 6\n")
	brewtest.MatchesReadme(t, "../../README.md", "isr-changes", changes)
}

// Ctrl-C stops the watch within a second.
func TestInterrupt(t *testing.T) {
	env := brewtest.Cluster(t)
	res := brewtest.Interrupt(t, brewtest.BuildCmd(t), env.Config.Bootstrap(), func(out string) bool {
		return strings.Contains(out, "under-replicated")
	}, "-interval", "200ms")
	if res.Stderr != "watch-isr: interrupted\n" {
		t.Fatalf("stderr after Ctrl-C: %q", res.Stderr)
	}
}

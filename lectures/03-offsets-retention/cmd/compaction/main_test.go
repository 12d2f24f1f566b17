package main

import (
	"strings"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// Reading the compacted log back: a refused fetch is reported, not waited on.
func TestFetchErrorIsReported(t *testing.T) {
	brewtest.FetchFails(t, 20*time.Second, brewtest.BuildCmd(t))
}

// Ctrl-C while it waits for the cleaner: exit 130 within a second.
func TestInterrupt(t *testing.T) {
	env := brewtest.Cluster(t)
	res := brewtest.Interrupt(t, brewtest.BuildCmd(t), env.Config.Bootstrap(), func(out string) bool { return out != "" })
	if !strings.HasSuffix(res.Stderr, "compaction: interrupted\n") {
		t.Fatalf("stderr after Ctrl-C: %q", res.Stderr)
	}
}

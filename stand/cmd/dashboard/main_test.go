package main

import (
	"strings"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

func TestBadFlagsNameTheFlag(t *testing.T) {
	brewtest.BadFlag(t, "../dashboard", "-every", "1ms")
}

// No cluster: one line that says what to do, exit status 1.
func TestNoClusterIsOneLine(t *testing.T) {
	_, stderr, code := brewtest.RunCmd(t, brewtest.BuildCmd(t), "127.0.0.1:1", "-once")
	if code != 1 || !strings.HasPrefix(stderr, "dashboard: no Kafka answers at 127.0.0.1:1") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

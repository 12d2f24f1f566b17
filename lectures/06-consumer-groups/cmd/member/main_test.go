package main

import (
	"strings"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// A member whose fetches are refused (its read permission revoked) says so
// in one line and ends, instead of hanging in LeaveGroup.
func TestFetchErrorIsReported(t *testing.T) {
	brewtest.FetchFails(t, 20*time.Second, brewtest.BuildCmd(t), "-name", "a", "-group", "brew.test.fetch-fault", "-topic", "brew.orders.v1")
}

// The member says it joins only once its flags, its environment and the
// cluster are good: before that, a problem is the one thing it prints.
func TestNoBannerBeforeTheChecks(t *testing.T) {
	bin := brewtest.BuildCmd(t)
	for _, c := range []struct {
		bootstrap string
		args      []string
		code      int
		says      string
	}{
		{"127.0.0.1:1", nil, 1, "member: no Kafka answers at 127.0.0.1:1"},
		{"127.0.0.1", nil, 1, "member: KAFKA_BOOTSTRAP: "},
		{"127.0.0.1:1", []string{"-group="}, 2, "member: -group \"\": must not be empty"},
		{"127.0.0.1:1", []string{"-topic", "orders/v1"}, 2, "member: -topic orders/v1: "},
		{"127.0.0.1:1", []string{"-name="}, 2, "member: -name \"\": must not be empty"},
	} {
		r := brewtest.Start(t, bin, c.bootstrap, c.args...)
		code := r.Wait(t, 15*time.Second) // a cluster that does not answer is told within 10 s
		stdout, stderr := r.Stdout(), r.Stderr()
		if code != c.code || stdout != "" || !strings.HasPrefix(stderr, c.says) {
			t.Errorf("KAFKA_BOOTSTRAP=%s member %q: exit %d, want %d, no output and stderr starting %q\nstdout:\n%s\nstderr:\n%s",
				c.bootstrap, c.args, code, c.code, c.says, stdout, stderr)
		}
	}
}

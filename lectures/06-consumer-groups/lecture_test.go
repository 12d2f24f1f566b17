package lecture_test

import (
	"strings"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// The README's output blocks are well formed and agree with README.en.md,
// and the programs do not link the simulation.
func TestLecture(t *testing.T) { brewtest.CheckLecture(t) }

// A flag with a bad value is named with its value, exit status 2.
func TestBadFlagsNameTheFlag(t *testing.T) {
	for _, args := range [][]string{
		{"cmd/fanout", "-protocol", "sticky"},
		{"cmd/member", "-protocol", "sticky"},
		{"cmd/rebalance-timeline", "-settle", "0s"},
		{"cmd/demo-rebalance", "-rate", "0"},
		{"cmd/commit-styles", "-style", "manual"},
		{"cmd/commit-styles", "-crash-after", "60"},
		{"cmd/describe", "-group", ""},
		{"cmd/member", "-group", ""},
		{"cmd/member", "-topic", ""},
		{"cmd/member", "-topic", "orders/v1"},
	} {
		brewtest.BadFlag(t, args[0], args[1:]...)
	}
}

// The member and consumer processes the demos start check their -group and
// -topic as the programs do: a bad one is a usage error naming it.
func TestChildFlagsNameTheFlag(t *testing.T) {
	for _, c := range []struct {
		dir  string
		args []string
		says string
	}{
		{"cmd/demo-rebalance", []string{"member", "-topic", "brew.orders.v1", "-group="}, "member: -group \"\": must not be empty"},
		{"cmd/rebalance-timeline", []string{"member", "-group", "g", "-topic", "orders/v1"}, "member: -topic orders/v1: "},
		{"cmd/rebalance-timeline", []string{"member", "-group", "g"}, "member: -topic \"\": must not be empty"},
		{"cmd/commit-styles", []string{"consumer", "-topic", "brew.orders.v1", "-group="}, "consumer: -group \"\": must not be empty"},
		{"cmd/commit-styles", []string{"consumer", "-group", "g", "-topic", ".."}, "consumer: -topic ..: "},
	} {
		_, stderr, code := brewtest.RunCmd(t, brewtest.BuildCmdAt(t, c.dir), "127.0.0.1:1", c.args...)
		if code != 2 || !strings.HasPrefix(stderr, c.says) {
			t.Errorf("%s %q: exit %d, want 2 and stderr starting %q; stderr:\n%s", c.dir, c.args, code, c.says, stderr)
		}
	}
}

package lecture_test

import (
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// The README's output blocks are well formed and agree with README.en.md,
// and the programs do not link the simulation.
func TestLecture(t *testing.T) { brewtest.CheckLecture(t) }

// A flag with a bad value is named with its value, exit status 2.
func TestBadFlagsNameTheFlag(t *testing.T) {
	for _, args := range [][]string{
		{"cmd/failover", "-rate", "0"},
		{"cmd/quorum-math", "-nodes", "100"},
		{"cmd/watch-isr", "-interval", "0s"},
		{"cmd/watch-isr", "-topic", ""},
		{"cmd/preferred-leader", "-topic", ""},
		{"cmd/preferred-leader", "-topic", "bad/name"},
		{"cmd/failover", "-topic", ""},
		{"cmd/timeline", "-in", ""},
	} {
		brewtest.BadFlag(t, args[0], args[1:]...)
	}
}

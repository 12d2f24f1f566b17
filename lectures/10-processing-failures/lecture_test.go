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
		{"cmd/partner", "-error-rate", "2"},
		{"cmd/naive", "-orders", "0"},
		{"cmd/naive", "-poison", "-1", "-restarts", "2"},
		{"cmd/double-booking", "-share", "1"},
		{"cmd/retry-topics", "-delays", "2s"},
		{"cmd/retry-topics", "-error-rate", "1.5"},
		{"cmd/retry-topics", "-poison", "60"},
		{"cmd/dlt", "-replay", "-kind", "fatal"},
		{"cmd/dlt", "-kind", "poison"},
		{"cmd/backpressure", "-queue", "2"},
		{"cmd/backpressure", "-latency", "5s"},
		{"cmd/shutdown", "-stop-after", "600"},
		{"cmd/shutdown", "-session-timeout", "0s"},
	} {
		brewtest.BadFlag(t, args[0], args[1:]...)
	}
}

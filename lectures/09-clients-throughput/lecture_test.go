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
		{"cmd/bench", "-acks", "2"},
		{"cmd/bench", "-acks", "1"},
		{"cmd/bench", "-compression", "brotli"},
		{"cmd/bench", "-in-flight", "10"},
		{"cmd/compare", "-clients", "pulsar"},
		{"cmd/compare", "-linger", "-5ms"},
		{"cmd/compare", "-batch", "0"},
		{"cmd/compare", "-out", "lecture_test.go/results"},
		{"cmd/bench", "-linger", "-1ms"},
		{"cmd/sweep", "-records", "1"},
	} {
		brewtest.BadFlag(t, args[0], args[1:]...)
	}
}

package lecture_test

import (
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// The README's output blocks are well formed and agree with README.en.md,
// its steps agree with steps.txt and the Makefile, and the programs do not
// link the simulation.
func TestLecture(t *testing.T) { brewtest.CheckLecture(t) }

// A flag with a bad value is named with its value, exit status 2.
func TestBadFlagsNameTheFlag(t *testing.T) {
	for _, args := range [][]string{
		{"cmd/scale-out", "-throttle", "0"},
		{"cmd/scale-out", "-preload", "1000"},
		{"cmd/scale-out", "-rate", "0"},
	} {
		brewtest.BadFlag(t, args[0], args[1:]...)
	}
}

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
		{"cmd/compaction", "-limit", "0s"},
		{"cmd/load-and-watch", "-rate", "-1"},
		{"cmd/replay", "-to-datetime", "yesterday"},
		{"cmd/replay", "-to-datetime", "-10m"},
		{"cmd/replay", "-to-datetime", "0s"},
		{"cmd/replay", "-to-datetime", "2999-01-01T00:00:00Z"},
		{"cmd/replay", "-to-latest", "-topic", ""},
		{"cmd/replay", "-to-latest", "-topic", "no/such"},
		{"cmd/replay", "-to-latest", "-group", ""},
		{"cmd/retention", "-by", "size"},
		{"cmd/retention", "-retention", "-15s"},
		{"cmd/retention", "-by", "bytes", "-bytes", "-1"},
		{"cmd/load-and-watch", "-topic", ""},
		{"cmd/load-and-watch", "-topic", "a b"},
		{"cmd/load-and-watch", "-group", ""},
	} {
		brewtest.BadFlag(t, args[0], args[1:]...)
	}
}

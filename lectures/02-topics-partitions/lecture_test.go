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
		{"cmd/grow", "-from", "6", "-to", "3"},
		{"cmd/keyed-producer", "-key", "customer"},
		{"cmd/partition-of", "-partitions", "0"},
		{"cmd/promo", "-partitions", "1,x"},
		{"cmd/promo", "-rate", "0"},
		{"cmd/promo", "-rate", "-5"},
		{"cmd/promo", "-rate", "NaN"},
		{"cmd/promo", "-rate", "+Inf"},
		{"cmd/promo", "-rate", "700000"},
		{"cmd/keyed-producer", "-topic", "bad/name"},
		{"cmd/keyed-producer", "-topic", ""},
		{"cmd/keyed-producer", "-topic", ".."},
		{"cmd/inspect", "-topic", ",,"},
		{"cmd/inspect", "-topic", "brew.orders.v1,"},
		{"cmd/inspect", "-topic", ""},
	} {
		brewtest.BadFlag(t, args[0], args[1:]...)
	}
}

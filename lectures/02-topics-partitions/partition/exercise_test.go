package partition

import (
	"strconv"
	"strings"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// Exercise 1 of the README: partition-of's answer for ord-0000042, by hand.
func TestExercisePartitionOfOrder42(t *testing.T) {
	block := brewtest.ReadmeBlock(t, "../README.md", "exercise-partition-of").Text
	h := Murmur2([]byte("ord-0000042"))
	for _, want := range []string{"ord-0000042", itoa(int64(int32(h))), itoa(int64(Positive(h))), itoa(int64(ForKey([]byte("ord-0000042"), 6)))} {
		if !strings.Contains(block, want) {
			t.Errorf("README exercise block lacks %s:\n%s", want, block)
		}
	}
	if got := brewtest.ReadmeAnswer(t, "../README.md", "partition-of-ord-0000042"); got != itoa(int64(ForKey([]byte("ord-0000042"), 6))) {
		t.Errorf("README answers %s", got)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

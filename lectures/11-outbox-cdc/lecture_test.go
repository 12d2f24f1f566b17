package lecture_test

import (
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// The README's output blocks are well formed and agree with README.en.md,
// and the programs do not link the simulation.
func TestLecture(t *testing.T) { brewtest.CheckLecture(t) }


// Package grade is what an exercise's grader test uses. A grader lives beside
// the stub a student completes (lectures/NN-slug/exercises/NAME/grade_test.go)
// and runs only under `make check L=NN EX=NAME`, which sets BREW_GRADE=1: a
// plain `go test ./...` in the lecture skips it, since the untouched stub is
// meant to fail.
//
// A grader calls Start with the stand it can judge on, then checks what the
// student's code did and reports each failure with Fail: one line that says
// what happened, one line of hint. The course's exercises tool
// (stand/exercises) reads those lines; nothing else in the output matters.
package grade

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// EnvGrade is set to 1 by `make check` when it runs a grader.
const EnvGrade = "BREW_GRADE"

// Stand says which cluster a grader can honestly judge on.
type Stand int

const (
	// AnyStand: the behaviour graded is the client's or one the simulation
	// reproduces faithfully (placement of keys, commits, consumer groups):
	// any stand, and with none up an in-process simulation.
	AnyStand Stand = iota
	// RealKafka: the behaviour is real Kafka's (retention timing,
	// replication, transactions, share groups): the native or docker stand,
	// or KAFKA_BOOTSTRAP pointing at a real cluster.
	RealKafka
)

// The markers the exercises tool looks for in a grader's output.
const (
	markOn   = "grade: ON "
	markFail = "grade: FAIL "
	markHint = "grade: HINT "
)

// Start begins grading and returns the cluster to grade on. Outside `make
// check` it skips the test; on a simulation it fails a RealKafka grader with
// what to start.
func Start(t *testing.T, on Stand) *brewtest.Env {
	t.Helper()
	if os.Getenv(EnvGrade) != "1" {
		t.Skip("a grader: `make check L=NN EX=NAME` runs it on your solution")
	}
	env := brewtest.Cluster(t)
	switch {
	case !env.Simulated:
		t.Log(markOn + "real Kafka at " + env.Config.Bootstrap())
	case env.Sim != nil:
		t.Log(markOn + "an in-process simulation (kfake): no stand is up")
	default:
		t.Log(markOn + "the embedded simulation at " + env.Config.Bootstrap())
	}
	if on == RealKafka && env.Simulated {
		Fail(t, "start a real stand: `make up STAND=native` (Java) or `make up STAND=docker`, then check again",
			"this exercise is graded on real Kafka, and the cluster here is a simulation")
	}
	return env
}

// Fail reports one failure of the student's code, what happened and a hint,
// and ends the test.
func Fail(t testing.TB, hint, format string, args ...any) {
	t.Helper()
	t.Fatalf("%s%s\n%s%s", markFail, oneLine(fmt.Sprintf(format, args...)), markHint, oneLine(hint))
}

// Failed reports whether the code under grading returned an error; if so it
// fails the test with the error and the hint.
func Failed(t testing.TB, err error, hint, what string) {
	t.Helper()
	if err != nil {
		Fail(t, hint, "%s: %v", what, err)
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

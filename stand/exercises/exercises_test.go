package exercises

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryExerciseIsComplete holds each exercise to the layout: a stub with
// a TODO, a grader that says the same stand as the package comment, a
// reference solution and at least one wrong one; and no solution without
// its exercise. (`exercises prove`, in .ci/run, runs them.)
func TestEveryExerciseIsComplete(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	all, err := Find(root, "")
	require.NoError(t, err)
	require.NotEmpty(t, all)
	ids := map[string]bool{}
	for _, ex := range all {
		ids[ex.ID()] = true
		stub, err := os.ReadFile(ex.Stub())
		require.NoError(t, err)
		require.Contains(t, string(stub), "TODO", "%s: the stub marks what to write with TODO", ex.ID())
		require.NotEmpty(t, ex.Task, "%s: the package comment says the task", ex.ID())

		grader, err := os.ReadFile(filepath.Join(ex.Dir, "grade_test.go"))
		require.NoError(t, err, "%s has no grader", ex.ID())
		want := "grade.Start(t, grade.AnyStand)"
		if ex.Real {
			want = "grade.Start(t, grade.RealKafka)"
		}
		require.Contains(t, string(grader), want, "%s: the grader and the package comment (graded on %s) agree", ex.ID(), ex.GradedOn())
		require.NotEmpty(t, ex.Wrong, "%s: solutions/%s/%s needs a wrong_*.go, a mistake the grader must fail", ex.ID(), ex.Lecture, ex.Name)
	}
	dirs, err := filepath.Glob(filepath.Join(root, "solutions", "*", "*"))
	require.NoError(t, err)
	for _, d := range dirs {
		id := filepath.Base(filepath.Dir(d)) + "/" + filepath.Base(d)
		require.True(t, ids[id], "solutions/%s has no exercise lectures/%s-*/exercises/%s", id, filepath.Base(filepath.Dir(d)), filepath.Base(d))
	}
}

// A Needs line names the services an exercise needs, and is not its task.
func TestNeedsLine(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "lectures", "11-x", "exercises", "rows")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, StubFile), []byte("// Package rows is exercise 11/rows: write rows.\n//\n// Graded on: any stand.\n// Needs: postgres.\n//\n// Write the rows.\npackage rows\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "solutions", "11", "rows"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "solutions", "11", "rows", "solution.go"), []byte("package rows\n"), 0o644))
	all, err := Find(root, "11")
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.Equal(t, []string{"postgres"}, all[0].Needs)
	require.Equal(t, "Write the rows.", all[0].Task)
	require.Equal(t, "any stand with postgres", all[0].GradedOn())
}

func TestParseGraderOutput(t *testing.T) {
	out := strings.Join([]string{
		`{"Action":"start","Package":"x"}`,
		`{"Action":"output","Test":"TestGrade","Output":"    grade_test.go:19: grade: ON real Kafka at 127.0.0.1:19092\n"}`,
		`{"Action":"output","Test":"TestGrade","Output":"    grade_test.go:62: grade: FAIL key k went to 3, Kafka stored it in 1\n"}`,
		`{"Action":"output","Test":"TestGrade","Output":"        grade: HINT murmur2\n"}`,
		`{"Action":"fail","Test":"TestGrade"}`,
		`{"Action":"fail"}`,
	}, "\n")
	r := parse([]byte(out))
	require.False(t, r.Passed)
	require.True(t, r.Graded())
	require.Equal(t, "real Kafka at 127.0.0.1:19092", r.On)
	require.Equal(t, []Failure{{What: "key k went to 3, Kafka stored it in 1", Hint: "murmur2"}}, r.Failures)

	panicked := strings.Join([]string{
		`{"Action":"output","Test":"TestGrade","Output":"panic: runtime error: index out of range [3] with length 3\n"}`,
		`{"Action":"output","Test":"TestGrade","Output":"goroutine 7 [running]:\n"}`,
		`{"Action":"output","Test":"TestGrade","Output":"\t/home/s/brew/lectures/02-topics-partitions/exercises/partitioner/exercise.go:17 +0x1d\n"}`,
		`{"Action":"fail"}`,
	}, "\n")
	r = parse([]byte(panicked))
	require.False(t, r.Graded())
	require.Equal(t, []string{"your code panicked: runtime error: index out of range [3] with length 3 at partitioner/exercise.go:17"}, r.Broken)

	built := strings.Join([]string{
		`{"ImportPath":"x","Action":"build-output","Output":"# x\n"}`,
		`{"ImportPath":"x","Action":"build-output","Output":"./exercise.go:17:9: undefined: murmur\n"}`,
		`{"ImportPath":"x","Action":"build-fail"}`,
		`{"Action":"fail"}`,
	}, "\n")
	r = parse([]byte(built))
	require.False(t, r.Graded())
	require.Equal(t, []string{"./exercise.go:17:9: undefined: murmur"}, r.Broken)
}

// An exercise whose grader stops or freezes nodes (TestGradeAlone) is
// marked Alone: the real tier proves those with the tests that hold the
// stand alone.
func TestGradersThatHoldTheStandAloneAreMarked(t *testing.T) {
	all, err := Find("../..", "")
	if err != nil {
		t.Fatal(err)
	}
	var alone []string
	for _, ex := range all {
		if ex.Alone {
			alone = append(alone, ex.ID())
		}
	}
	want := []string{"04/isrcheck", "05/chooseacks", "05/safeproducer", "09/trickle"}
	if !slices.Equal(alone, want) {
		t.Errorf("alone: %v, want %v", alone, want)
	}
}

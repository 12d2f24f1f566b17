// Package exercises finds the course's graded exercises and runs their
// graders: `make exercise`, `make check L=NN EX=NAME` and `make progress`.
//
// An exercise is a folder lectures/NN-slug/exercises/NAME/ with the stub a
// student completes (exercise.go) and its grader (grade_test.go, package
// grade). exercise.go's package comment names it and says where it is graded:
//
//	// Package NAME is exercise NN/NAME: one line of title.
//	//
//	// Graded on: any stand.        (or: real Kafka.)
//	// Needs: postgres.             (optional: the services beside the cluster it needs)
//	//
//	// The task, one paragraph.
//
// Its reference solution is solutions/NN/NAME/solution.go, and the mistakes
// students make are solutions/NN/NAME/wrong_*.go; each replaces exercise.go
// when graded (go test -overlay), so the grader is proven on both sides: the
// solution passes, the stub and every wrong solution fail. A new exercise
// needs nothing outside those two folders.
package exercises

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// StubFile is the file of an exercise a student edits.
const StubFile = "exercise.go"

// Exercise is one graded exercise.
type Exercise struct {
	Lecture  string   // "02"
	Name     string   // "partitioner"
	Dir      string   // the exercise's folder
	Root     string   // the repository's folder
	Title    string   // the package comment's first line, after "is exercise NN/NAME: "
	Task     string   // the package comment after the "Graded on" line
	Real     bool     // graded on real Kafka only
	Needs    []string // the services beside the cluster it needs (postgres, connect)
	Alone    bool     // its grader holds the stand alone (TestGradeAlone: it stops or freezes nodes)
	Solution string   // the reference solution
	Wrong    []string
}

// ID is "NN/NAME".
func (e Exercise) ID() string { return e.Lecture + "/" + e.Name }

// Stub is the path of the file the student edits.
func (e Exercise) Stub() string { return filepath.Join(e.Dir, StubFile) }

// GradedOn says where the exercise is graded, for people.
func (e Exercise) GradedOn() string {
	on := "any stand"
	if e.Real {
		on = "real Kafka"
	}
	if len(e.Needs) > 0 {
		on += " with " + strings.Join(e.Needs, ", ")
	}
	return on
}

var (
	lectureDirRe = regexp.MustCompile(`^(\d\d)-`)
	titleRe      = regexp.MustCompile(`^Package (\w+) is exercise (\d\d)/(\w+): (.+)$`)
	gradedRe     = regexp.MustCompile(`(?m)^Graded on: (any stand|real Kafka)\.$`)
	needsRe      = regexp.MustCompile(`(?m)^Needs: ([a-z, ]+)\.$`)
)

// Find returns every exercise under root (the repository), in lecture and
// name order; lecture ("02"), when not empty, keeps that lecture's only.
func Find(root, lecture string) ([]Exercise, error) {
	stubs, err := filepath.Glob(filepath.Join(root, "lectures", "*", "exercises", "*", StubFile))
	if err != nil {
		return nil, err
	}
	var all []Exercise
	for _, stub := range stubs {
		dir := filepath.Dir(stub)
		m := lectureDirRe.FindStringSubmatch(filepath.Base(filepath.Dir(filepath.Dir(dir))))
		if m == nil {
			continue
		}
		if lecture != "" && m[1] != lecture {
			continue
		}
		ex, err := read(root, m[1], dir)
		if err != nil {
			return nil, err
		}
		all = append(all, ex)
	}
	slices.SortFunc(all, func(a, b Exercise) int { return strings.Compare(a.ID(), b.ID()) })
	return all, nil
}

// read parses one exercise's package comment and finds its solutions.
func read(root, lecture, dir string) (Exercise, error) {
	ex := Exercise{Lecture: lecture, Name: filepath.Base(dir), Dir: dir, Root: root}
	f, err := parser.ParseFile(token.NewFileSet(), ex.Stub(), nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return ex, fmt.Errorf("exercise %s: %w", ex.ID(), err)
	}
	doc := ""
	if f.Doc != nil {
		doc = f.Doc.Text()
	}
	first, rest, _ := strings.Cut(doc, "\n")
	m := titleRe.FindStringSubmatch(first)
	if m == nil || m[1] != f.Name.Name || m[2] != lecture || m[3] != ex.Name {
		return ex, fmt.Errorf("%s: the package comment must start with %q", ex.Stub(),
			fmt.Sprintf("Package %s is exercise %s/%s: <title>", ex.Name, lecture, ex.Name))
	}
	ex.Title = strings.TrimSuffix(m[4], ".")
	g := gradedRe.FindStringSubmatchIndex(rest)
	if g == nil {
		return ex, fmt.Errorf("%s: the package comment has no line %q or %q", ex.Stub(), "Graded on: any stand.", "Graded on: real Kafka.")
	}
	ex.Real = rest[g[2]:g[3]] == "real Kafka"
	task := rest[g[1]:]
	if n := needsRe.FindStringSubmatchIndex(task); n != nil {
		ex.Needs = strings.FieldsFunc(task[n[2]:n[3]], func(r rune) bool { return r == ',' || r == ' ' })
		task = task[n[1]:]
	}
	ex.Task = strings.Join(strings.Fields(task), " ")
	if grader, err := os.ReadFile(filepath.Join(dir, "grade_test.go")); err == nil {
		ex.Alone = strings.Contains(string(grader), "\nfunc TestGradeAlone(")
	}

	sol := filepath.Join(root, "solutions", lecture, ex.Name)
	ex.Solution = filepath.Join(sol, "solution.go")
	if _, err := os.Stat(ex.Solution); err != nil {
		return ex, fmt.Errorf("exercise %s has no reference solution: %w", ex.ID(), err)
	}
	ex.Wrong, _ = filepath.Glob(filepath.Join(sol, "wrong_*.go"))
	return ex, nil
}

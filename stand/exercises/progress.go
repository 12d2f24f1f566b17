package exercises

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Progress is what `make check` remembers of each exercise, in
// .stand/exercises.json: the last grading of the student's file.
type Progress map[string]Check

// Check is the last grading of one exercise.
type Check struct {
	Passed bool
	When   time.Time
	On     string
	First  string // the first finding, or what kept it from being graded
	Sum    string // the stub file's hash when it was graded
}

// ProgressFile is where the progress is kept, under the repository root.
func ProgressFile(root string) string { return filepath.Join(root, ".stand", "exercises.json") }

// LoadProgress reads the progress; none yet is an empty one.
func LoadProgress(root string) (Progress, error) {
	b, err := os.ReadFile(ProgressFile(root))
	if errors.Is(err, fs.ErrNotExist) {
		return Progress{}, nil
	}
	if err != nil {
		return nil, err
	}
	p := Progress{}
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, err
	}
	return p, nil
}

// Record keeps r as ex's last grading.
func (p Progress) Record(ex Exercise, r Result) {
	c := Check{Passed: r.Passed, When: time.Now(), On: r.On, Sum: fileSum(ex.Stub())}
	switch {
	case len(r.Failures) > 0:
		c.First = r.Failures[0].What
	case len(r.Broken) > 0:
		c.First = r.Broken[0]
	}
	p[ex.ID()] = c
}

// Save writes the progress.
func (p Progress) Save(root string) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(ProgressFile(root)), 0o755); err != nil {
		return err
	}
	return os.WriteFile(ProgressFile(root), append(b, '\n'), 0o644)
}

// State says where the student is with ex.
type State string

const (
	NotStarted State = "not started" // the stub as the course ships it, never checked
	Started    State = "not checked" // changed since the course shipped it or since its last check
	Failing    State = "failing"
	Passed     State = "passed"
)

// State returns ex's state and its last check, if any.
func (p Progress) State(root string, ex Exercise) (State, *Check) {
	c, ok := p[ex.ID()]
	if ok && c.Sum == fileSum(ex.Stub()) {
		if c.Passed {
			return Passed, &c
		}
		return Failing, &c
	}
	if !ok && shipped(root, ex.Stub()) {
		return NotStarted, nil
	}
	return Started, nil
}

// shipped reports whether file is as git has it committed (the stub the
// course ships); outside a git checkout it says yes.
func shipped(root, file string) bool {
	rel, err := filepath.Rel(root, file)
	if err != nil {
		return false
	}
	cmd := exec.Command("git", "diff", "--quiet", "HEAD", "--", rel)
	cmd.Dir = root
	err = cmd.Run()
	var exit *exec.ExitError
	return !errors.As(err, &exit)
}

func fileSum(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

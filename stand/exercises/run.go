package exercises

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Result is what one grading run found.
type Result struct {
	Passed   bool
	On       string    // the cluster it was graded on, as the grader said
	Failures []Failure // the grader's findings, each with a hint
	// Broken holds what kept the code from being graded: a build error, a
	// panic, or a grader failure that is not a finding (the cluster went away).
	Broken  []string
	Elapsed time.Duration
}

// Failure is one finding of a grader.
type Failure struct{ What, Hint string }

// Graded reports whether the grader judged the code (passed or found
// something), rather than failing to build or run it.
func (r Result) Graded() bool { return r.Passed || (len(r.Failures) > 0 && len(r.Broken) == 0) }

// Run grades ex: its stub, or with replace set the file that stands in for
// the stub (a solution). env is added to the grader's environment.
//
// The grader's test binary is linked once per stub or solution and kept
// under .stand/testbin/exercises ($BREW_TESTBIN/exercises when set, as the
// test tiers keep theirs): go test -c leaves a binary that is up to date as
// it is, so grading the same code again (the simulation's proof in make
// check, then the real tier's) links nothing. go tool test2json turns
// its output into go test -json's events.
func Run(ctx context.Context, ex Exercise, replace string, env []string) (Result, error) {
	start := time.Now()
	genv := append(append(os.Environ(), "BREW_GRADE=1"), env...)
	bin, broken, err := buildGrader(ctx, ex, replace, genv)
	if err != nil {
		return Result{}, err
	}
	if broken != nil {
		return Result{Broken: broken, Elapsed: time.Since(start)}, nil
	}
	// go test's own bound is 10 minutes; a grader that stops nodes first
	// waits for the stand lock, which the tests of a whole tier may hold.
	args := []string{"-t", "-p", ex.ID(), bin,
		"-test.v=test2json", "-test.count=1", "-test.timeout=30m", "-test.run=^TestGrade"}
	t2j := test2json()
	cmd := exec.CommandContext(ctx, t2j[0], append(t2j[1:], args...)...)
	cmd.Dir = ex.Dir
	cmd.Env = genv
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	r := parse(out)
	r.Elapsed = time.Since(start)
	if err != nil && ctx.Err() != nil {
		return r, ctx.Err()
	}
	if s := strings.TrimSpace(stderr.String()); s != "" && !r.Passed {
		r.Broken = append(r.Broken, strings.Split(s, "\n")...)
	}
	if !r.Passed && len(r.Failures) == 0 && len(r.Broken) == 0 {
		r.Broken = append(r.Broken, fmt.Sprintf("test2json %s failed and said nothing: %v", strings.Join(args, " "), err))
	}
	return r, nil
}

var (
	t2jOnce sync.Once
	t2jCmd  []string
)

// test2json is the command that runs go's test2json tool: its path, asked
// of go once a process (`go tool test2json` costs 0.15 CPU-seconds a
// grading to find it), or go tool test2json when go does not say.
func test2json() []string {
	t2jOnce.Do(func() {
		t2jCmd = []string{"go", "tool", "test2json"}
		if p, err := exec.Command("go", "tool", "-n", "test2json").Output(); err == nil && isFile(strings.TrimSpace(string(p))) {
			t2jCmd = []string{strings.TrimSpace(string(p))}
		}
	})
	return t2jCmd
}

// buildGrader links ex's grader with the stub, or with replace in the
// stub's place (go test -overlay), and returns the binary; or, when the code
// does not build, what the compiler said.
func buildGrader(ctx context.Context, ex Exercise, replace string, env []string) (bin string, broken []string, err error) {
	variant := "stub"
	args := []string{"test", "-c"}
	if replace != "" {
		abs, err := filepath.Abs(replace)
		if err != nil {
			return "", nil, err
		}
		stub, err := filepath.Abs(ex.Stub())
		if err != nil {
			return "", nil, err
		}
		overlay, err := os.CreateTemp("", "brew-exercise-*.json")
		if err != nil {
			return "", nil, err
		}
		defer os.Remove(overlay.Name())
		if err := json.NewEncoder(overlay).Encode(map[string]map[string]string{"Replace": {stub: abs}}); err != nil {
			return "", nil, err
		}
		overlay.Close()
		args = append(args, "-overlay", overlay.Name())
		variant = strings.TrimSuffix(filepath.Base(replace), ".go")
	}
	dir := filepath.Join(os.TempDir(), "brew-exercises")
	if d := os.Getenv("BREW_TESTBIN"); d != "" {
		dir = filepath.Join(d, "exercises")
	} else if ex.Root != "" {
		dir = filepath.Join(ex.Root, ".stand", "testbin", "exercises")
	}
	dir = filepath.Join(dir, ex.Lecture+"-"+ex.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	bin = filepath.Join(dir, variant+".test")
	key := linkKey(ex, variant, replace)
	if key != "" && isFile(bin) {
		if k, err := os.ReadFile(bin + ".key"); err == nil && string(k) == key {
			return bin, nil, nil
		}
	}
	os.Remove(bin + ".key")
	args = append(args, "-o", bin, ".")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = ex.Dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err == nil {
		if key != "" {
			os.WriteFile(bin+".key", []byte(key), 0o644) //nolint:errcheck // without it, go is asked next time
		}
		return bin, nil, nil
	}
	if ctx.Err() != nil {
		return "", nil, ctx.Err()
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" && !strings.HasPrefix(l, "# ") && !strings.HasPrefix(l, "go: downloading ") {
			broken = append(broken, l)
		}
	}
	if len(broken) == 0 {
		broken = []string{fmt.Sprintf("go %s failed and said nothing: %v", strings.Join(args, " "), err)}
	}
	return "", broken, nil
}

// linkKey names what a grader's binary is linked from when the checkout is
// a clean git tree: the tree's hash, the Go toolchain, GOFLAGS, the exercise
// and the variant. A binary whose key file holds the same key is used as it
// is: asking go whether it is up to date costs about half a CPU-second a
// grading, and a CI run grades about 300 times on a clean clone. Any other
// checkout (a student's, with a stub being written) gets "": go is asked.
func linkKey(ex Exercise, variant, replace string) string {
	tree := cleanTree(ex.Root)
	if tree == "" || goVersion() == "" {
		return ""
	}
	if replace != "" {
		if rel, err := filepath.Rel(ex.Root, replace); err == nil {
			replace = rel
		}
	}
	return strings.Join([]string{tree, goVersion(), "GOFLAGS=" + os.Getenv("GOFLAGS"), ex.ID(), variant, replace}, "\n")
}

var (
	treeOnce, goOnce sync.Once
	tree, gover      string
)

// cleanTree is the hash of root's git tree when nothing in it differs from
// HEAD (ignored files aside), else "". It is read once a process.
func cleanTree(root string) string {
	treeOnce.Do(func() {
		if root == "" {
			return
		}
		st, err := exec.Command("git", "-C", root, "status", "--porcelain").Output()
		if err != nil || len(bytes.TrimSpace(st)) > 0 {
			return
		}
		if h, err := exec.Command("git", "-C", root, "rev-parse", "HEAD^{tree}").Output(); err == nil {
			tree = strings.TrimSpace(string(h))
		}
	})
	return tree
}

func goVersion() string {
	goOnce.Do(func() {
		if v, err := exec.Command("go", "env", "GOVERSION").Output(); err == nil {
			gover = strings.TrimSpace(string(v))
		}
	})
	return gover
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// event is one line of go test -json.
type event struct {
	Action string
	Test   string
	Output string
}

var (
	markRe  = regexp.MustCompile(`grade: (ON|FAIL|HINT) (.*)`)
	fileRe  = regexp.MustCompile(`^\s*\S+_test\.go:\d+: (.*)$`)
	panicRe = regexp.MustCompile(`^panic: (.*)`)
	frameRe = regexp.MustCompile(`^\s+(\S*/exercises/[^/]+/` + StubFile + `:\d+)`)
)

// parse reads go test -json's output.
func parse(out []byte) Result {
	var r Result
	var panicked string
	var said []string // the grader's other lines: a t.Fatal that is not a finding, or a log
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			if l := strings.TrimSpace(sc.Text()); l != "" {
				r.Broken = append(r.Broken, l)
			}
			continue
		}
		switch ev.Action {
		case "pass":
			if ev.Test == "" {
				r.Passed = true
			}
		case "build-output":
			if l := strings.TrimRight(ev.Output, "\n"); l != "" && !strings.HasPrefix(l, "# ") {
				r.Broken = append(r.Broken, l)
			}
		case "output":
			l := strings.TrimRight(ev.Output, "\n")
			if m := markRe.FindStringSubmatch(l); m != nil {
				switch m[1] {
				case "ON":
					r.On = m[2]
				case "FAIL":
					r.Failures = append(r.Failures, Failure{What: m[2]})
				case "HINT":
					if n := len(r.Failures); n > 0 {
						r.Failures[n-1].Hint = m[2]
					}
				}
				continue
			}
			if m := panicRe.FindStringSubmatch(l); m != nil && panicked == "" {
				panicked = m[1]
				continue
			}
			if m := frameRe.FindStringSubmatch(l); m != nil && panicked != "" && !strings.Contains(panicked, " at ") {
				panicked += " at " + filepath.Base(filepath.Dir(m[1])) + "/" + filepath.Base(m[1])
				continue
			}
			if m := fileRe.FindStringSubmatch(l); m != nil && ev.Test != "" {
				said = append(said, m[1])
			}
		}
	}
	if !r.Passed && len(r.Failures) == 0 && len(said) > 0 {
		r.Broken = append(r.Broken, "the grader stopped: "+said[len(said)-1])
	}
	if panicked != "" {
		r.Broken = append([]string{"your code panicked: " + panicked}, r.Broken...)
	}
	if r.Passed {
		r.Failures, r.Broken = nil, nil
	}
	return r
}

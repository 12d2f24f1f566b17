package brewtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/steps"
)

// CheckLecture holds a lecture module to the course's rules; call it from a
// test in the lecture's root folder. Its README.md and README.en.md pass
// checkReadme and agree block for block, its steps.txt agrees with its
// Makefile and READMEs (checkSteps), both name every graded exercise
// (checkExercises), their Go blocks are excerpts of the lecture's source and
// their reading lists name what the files declare (checkLectureCode), each
// program under cmd/ runs a package of its name (checkProgramNames), and no
// program under cmd/ links the simulation (kfake), which is for tests and
// the embedded stand only.
func CheckLecture(t *testing.T) {
	t.Helper()
	checkReadme(t, "README.md")
	checkReadme(t, "README.en.md")
	translationAgrees(t, "README.md", "README.en.md")
	checkLanguageLine(t)
	checkSteps(t)
	checkExercises(t)
	checkLectureCode(t)
	checkProgramNames(t, ".")

	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./cmd/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/...: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "/kfake") || strings.HasSuffix(dep, "/brewkit/sim") || strings.HasSuffix(dep, "/brewkit/brewtest") {
			t.Errorf("a program under cmd/ links %s: programs must not carry the simulation or test helpers", dep)
		}
	}
}

// The language line each README carries on its third line, under the title.
var languageLines = map[string]string{
	"README.md":    "**Русский** · [English](README.en.md)",
	"README.en.md": "[Русский](README.md) · **English**",
}

// checkLanguageLine holds both READMEs to the line that links one to the
// other.
func checkLanguageLine(t *testing.T) {
	t.Helper()
	for file, want := range languageLines {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(b), "\n", 4)
		if len(lines) < 3 || lines[2] != want {
			t.Errorf("%s: line 3 must be the language line %q", file, want)
		}
	}
}

// checkExercises holds each README to the lecture's graded exercises: every
// folder under exercises/ is named in both, as the command that grades it
// (`make check EX=NAME`), so a student finds each task in the text.
func checkExercises(t *testing.T) {
	t.Helper()
	stubs, _ := filepath.Glob(filepath.Join("exercises", "*", "exercise.go"))
	for _, file := range []string{"README.md", "README.en.md"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, stub := range stubs {
			name := filepath.Base(filepath.Dir(stub))
			if !strings.Contains(string(b), "EX="+name) {
				t.Errorf("%s does not name the exercise %s: its exercises section shows `make check EX=%s` with the task", file, name, name)
			}
		}
	}
}

// checkSteps holds the lecture's walk-through (steps.txt, which `make tour`
// runs) to its Makefile and READMEs: every step's command is a target of the
// Makefile, and each README's steps block (between <!-- steps: ... --> and
// <!-- /steps -->) is the list steps.txt makes, so the tour, the README and
// the tests cannot drift apart. BREW_UPDATE_STEPS=1 rewrites the blocks.
func checkSteps(t *testing.T) {
	t.Helper()
	l, err := steps.Read(steps.File)
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	// The targets every lecture shares (test, smoke, restore) are in the
	// lectures' common lecture.mk, which each Makefile includes.
	if shared, err := os.ReadFile(filepath.Join("..", "lecture.mk")); err == nil {
		mk = append(mk, shared...)
	}
	targets := map[string]bool{}
	for _, m := range targetRe.FindAllStringSubmatch(string(mk), -1) {
		targets[m[1]] = true
	}
	for _, st := range l.Steps {
		if !targets[st.Target] {
			t.Errorf("%s:%d: step %q runs `make %s`, which the Makefile does not have", steps.File, st.Line, st.Title, st.Target)
		}
	}
	for _, r := range []struct {
		file   string
		titled bool
	}{{"README.md", true}, {"README.en.md", false}} {
		b, err := os.ReadFile(r.file)
		if err != nil {
			t.Fatal(err)
		}
		m := stepsBlockRe.FindStringSubmatchIndex(string(b))
		if m == nil {
			t.Errorf("%s has no steps block (<!-- steps: ... --> ... <!-- /steps -->) for %s", r.file, steps.File)
			continue
		}
		got, want := string(b[m[2]:m[3]]), steps.Markdown(l, r.titled)
		if got == want {
			continue
		}
		if os.Getenv("BREW_UPDATE_STEPS") == "1" {
			out := string(b[:m[2]]) + want + string(b[m[3]:])
			if err := os.WriteFile(r.file, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: steps block rewritten from %s", r.file, steps.File)
			continue
		}
		t.Errorf("%s's steps block differs from %s (BREW_UPDATE_STEPS=1 go test -run TestLecture . rewrites it):\n--- README\n%s--- steps.txt\n%s", r.file, steps.File, got, want)
	}
}

var (
	targetRe     = regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`)
	stepsBlockRe = regexp.MustCompile(`(?s)<!-- steps:[^\n]*-->\n(.*?)<!-- /steps -->`)
)

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// waitStep is a live view (sleep) that the tour would stop after a minute.
const waitStep = "== Wait\nmake wait\nstop: 1m\nA live view.\n\n"

// helloStep is a step that ends by itself.
const helloStep = "== Hello\nmake hello\nSays hello.\n\n"

// fakeLecture writes a lecture folder named name with these steps.
func fakeLecture(t *testing.T, name string, steps ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"steps.txt": "topics:\ngroups:\n\n" + strings.Join(steps, ""),
		"Makefile":  "wait:\n\t@echo waiting; sleep 60\nhello:\n\t@echo hello\n",
	}
	for f, text := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// run runs the tour in dir with args and returns its stderr and exit code.
func run(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(brewtest.BuildCmd(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KAFKA_BOOTSTRAP=127.0.0.1:1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return stderr.String(), cmd.ProcessState.ExitCode()
}

// `tour .` in a folder with a one-character name panicked taking the
// lecture number from the name; a folder that is not a lecture's is a usage
// error in one line.
func TestNotALectureFolder(t *testing.T) {
	for _, name := range []string{"x", "lectures", "9-short"} {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		stderr, code := run(t, dir, ".")
		if code != 2 || !strings.HasPrefix(stderr, "tour: "+dir+" is not a lecture folder") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("tour . in %s: exit %d, want 2 and one line; stderr:\n%s", name, code, stderr)
		}
	}
}

func TestBadFlagsNameTheFlag(t *testing.T) {
	brewtest.BadFlag(t, "../tour", "-auto", "-pause", "-1s")
}

// `tour .` in a lecture's folder takes its number from the absolute path;
// q ends the tour with status 0.
func TestDotIsTheLectureFolder(t *testing.T) {
	dir := fakeLecture(t, "42-fake", helloStep, helloStep)
	cmd := exec.Command(brewtest.BuildCmd(t), ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KAFKA_BOOTSTRAP=127.0.0.1:1")
	cmd.Stdin = strings.NewReader("q\n")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "=== Lecture 42, step 1 of 2: Hello") || !strings.Contains(string(out), "tour stopped") {
		t.Errorf("tour . in 42-fake, then q: %v, want exit 0, the lecture's number and \"tour stopped\"; output:\n%s", err, out)
	}
}

// Ctrl-C ends the tour as it ends every course program: status 130 and
// "tour: interrupted"; q is a normal end, status 0.
func TestInterruptedIsExit130(t *testing.T) {
	dir := fakeLecture(t, "42-fake", waitStep, helloStep)
	res := brewtest.Interrupt(t, brewtest.BuildCmd(t), "127.0.0.1:1",
		func(out string) bool { return strings.Contains(out, "waiting") }, dir)
	if !strings.Contains("\n"+res.Stderr, "\ntour: interrupted") || strings.Contains(res.Stdout, "as planned") {
		t.Errorf("stderr %q, want a line starting \"tour: interrupted\"; stdout:\n%s", res.Stderr, res.Stdout)
	}
}

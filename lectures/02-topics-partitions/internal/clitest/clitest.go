// Package clitest builds and runs this lecture's commands in tests.
package clitest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// Build compiles the command in the current directory.
func Build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(mustWd(t)))
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// Run runs bin with args against bootstrap and returns stdout, stderr and the exit code.
func Run(t *testing.T, bin, bootstrap string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KAFKA_BOOTSTRAP="+bootstrap)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return o.String(), e.String(), exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}

var (
	testTopic = regexp.MustCompile(`brew\.[\w.-]*\w`)
	bars      = regexp.MustCompile(`#+`)
)

// Normalize blanks what differs between the README's run and a test's: topic
// names (tests write to fresh topics) and the length of share bars.
func Normalize(s string) string {
	return bars.ReplaceAllString(testTopic.ReplaceAllString(s, "TOPIC"), "#")
}

func mustWd(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

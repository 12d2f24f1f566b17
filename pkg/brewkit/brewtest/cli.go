package brewtest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// BuildCmd compiles the command in the test's working directory (a cmd/X
// package) and returns the binary's path.
func BuildCmd(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), filepath.Base(wd))
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// RunCmd runs bin with args and KAFKA_BOOTSTRAP=bootstrap (none when empty),
// and returns its stdout, stderr and exit code.
func RunCmd(t testing.TB, bin, bootstrap string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = os.Environ()
	if bootstrap != "" {
		cmd.Env = append(cmd.Env, "KAFKA_BOOTSTRAP="+bootstrap)
	}
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
	topicName = regexp.MustCompile(`brew\.[\w.-]*\w`)
	shareBars = regexp.MustCompile(`#+`)
)

// Names blanks topic and group names (brew.…), which tests choose fresh.
func Names(s string) string { return topicName.ReplaceAllString(s, "NAME") }

// Bars blanks the length of share bars (####).
func Bars(s string) string { return shareBars.ReplaceAllString(s, "#") }

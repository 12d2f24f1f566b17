package brewtest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
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

// Interrupted is what a program did after Ctrl-C.
type Interrupted struct {
	Stdout, Stderr string
	Code           int           // exit status
	Took           time.Duration // from SIGINT to exit
}

// Interrupt starts bin with args and KAFKA_BOOTSTRAP=bootstrap, waits until
// its output (stdout and stderr together) satisfies ready, sends SIGINT and
// waits for it to exit. It fails the test unless the program exits with
// status 130 within brewkit.StopGrace and a margin for this machine.
func Interrupt(t testing.TB, bin, bootstrap string, ready func(output string) bool, args ...string) Interrupted {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KAFKA_BOOTSTRAP="+bootstrap)
	var out, errOut, both lockedBuffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, &both), io.MultiWriter(&errOut, &both)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) //nolint:errcheck // gone already when it passed
	Eventually(t, time.Minute, "the program to get going", func() (bool, string) {
		s := both.String()
		return ready(s), s
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	err := cmd.Wait()
	res := Interrupted{Stdout: out.String(), Stderr: errOut.String(), Took: time.Since(sent)}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		res.Code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if res.Code != 130 {
		t.Fatalf("after Ctrl-C: exit status %d, want 130\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if limit := brewkit.StopGrace + 500*time.Millisecond; res.Took > limit {
		t.Fatalf("after Ctrl-C the program took %s to exit, over %s", res.Took, limit)
	}
	return res
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

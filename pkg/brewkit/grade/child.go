package grade

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Child is a process of the grader's own: this test binary run again with
// -test.run naming one test (which calls the student's code), so that the
// grader can kill it with SIGKILL. It writes one line to stdout for each
// thing it did; the grader reads them as they come.
type Child struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer // read once the process has ended
	mu     sync.Mutex
	lines  []string
	more   chan struct{} // closed at each new line, and at the end
	ended  chan struct{} // closed once the process has ended and its output is read
	err    error         // Wait's
}

// StartChild runs test in a new process with env added to the environment;
// it is killed when the test ends, if it has not ended before.
func StartChild(t testing.TB, test string, env ...string) *Child {
	t.Helper()
	c := &Child{more: make(chan struct{}), ended: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.timeout=3m")
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stderr = &c.stderr
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("starting the grader's process: %v", err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.mu.Lock()
			c.lines = append(c.lines, sc.Text())
			close(c.more)
			c.more = make(chan struct{})
			c.mu.Unlock()
		}
		err := c.cmd.Wait()
		c.mu.Lock()
		c.err = err
		close(c.more)
		c.mu.Unlock()
		close(c.ended)
	}()
	t.Cleanup(c.Kill)
	return c
}

// Lines returns what the child has written so far.
func (c *Child) Lines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

// Wait waits until cond holds for the lines written so far, the child ends or
// limit passes, and reports whether cond held.
func (c *Child) Wait(limit time.Duration, cond func([]string) bool) bool {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		lines, more := c.lines, c.more
		c.mu.Unlock()
		if cond(lines) {
			return true
		}
		select {
		case <-c.ended:
			return cond(c.Lines())
		case <-more:
		case <-deadline.C:
			return false
		}
	}
}

// Kill ends the child with SIGKILL, as a power cut would, and waits until it
// has ended and its output is read.
func (c *Child) Kill() {
	c.cmd.Process.Signal(syscall.SIGKILL) //nolint:errcheck // it may have ended already
	<-c.ended
}

// Stop asks the child to end (SIGTERM: the child's ctx ends), and kills it
// when it has not ended within limit.
func (c *Child) Stop(limit time.Duration) {
	c.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // it may have ended already
	select {
	case <-c.ended:
	case <-time.After(limit):
		c.Kill()
	}
}

// Crashed reports whether the child ended by SIGKILL.
func (c *Child) Crashed() bool {
	if !c.Done() {
		return false
	}
	var exit *exec.ExitError
	if !errors.As(c.err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// Done reports whether the child has ended.
func (c *Child) Done() bool {
	select {
	case <-c.ended:
		return true
	default:
		return false
	}
}

// Failure says, once the child has ended by itself, why: the line the student's
// function returned with, a panic, or how it exited.
func (c *Child) Failure(fn string) string {
	for _, l := range c.Lines() {
		if rest, ok := strings.CutPrefix(l, "returned "); ok {
			return fmt.Sprintf("%s returned (%s)", fn, rest)
		}
	}
	for _, l := range strings.Split(c.stderr.String(), "\n") {
		if strings.HasPrefix(l, "panic: ") {
			return fmt.Sprintf("%s panicked: %s", fn, strings.TrimPrefix(l, "panic: "))
		}
	}
	return fmt.Sprintf("the process running %s ended: %v", fn, c.err)
}

// Say writes one line for the grader, whole even when called from several
// goroutines at once.
var sayMu sync.Mutex

func Say(format string, args ...any) {
	sayMu.Lock()
	defer sayMu.Unlock()
	fmt.Fprintf(os.Stdout, format+"\n", args...)
}

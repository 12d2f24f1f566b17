package stand

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A background process is started in its own session, so that stopping the
// command that started it (make, a test binary) leaves it running, and is
// recorded in a pid file under .stand/.

// startDetached starts cmd in a new session with its output in logPath and
// writes its pid to pidPath.
func startDetached(cmd *exec.Cmd, logPath, pidPath string) error {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr, cmd.Stdin = logf, logf, nil
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true // keeps a Credential the caller set (a service run as its own user)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	// Reap the child if it exits while this process still runs (tests start
	// and stop nodes from one process); otherwise it would linger as a zombie.
	go cmd.Wait() //nolint:errcheck // the exit status is read from the log
	return os.WriteFile(pidPath, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
}

// livePid returns the pid in pidPath when that process runs and its command
// line contains marker (so a recycled pid is not mistaken for ours).
func livePid(pidPath, marker string) (int, bool) {
	b, err := os.ReadFile(pidPath)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, alive(pid, marker)
}

func alive(pid int, marker string) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && bytes.Contains(cmdline, []byte(marker))
}

// waitStopped waits until every thread of pid is stopped (state T or t in
// /proc/pid/task/*/stat), as SIGSTOP leaves them.
func waitStopped(pid int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		running, err := runningThreads(pid)
		if err != nil {
			return err
		}
		if running == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pid %d: %d threads still running %s after SIGSTOP", pid, running, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runningThreads counts the threads of pid that are not stopped.
func runningThreads(pid int) (int, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("reading the threads of pid %d: %w", pid, err)
	}
	running := 0
	for _, task := range tasks {
		stat, err := os.ReadFile(dir + "/" + task.Name() + "/stat")
		if err != nil {
			continue // the thread has exited
		}
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) {
			if st := stat[i+2]; st != 'T' && st != 't' {
				running++
			}
		}
	}
	return running, nil
}

// stopPid signals pid and waits until it is gone. A process that outlives
// grace after SIGTERM gets SIGKILL, and the caller hears about it.
func stopPid(pid int, marker string, kill bool, grace time.Duration) (killed bool, err error) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false, fmt.Errorf("signalling pid %d: %w", pid, err)
	}
	deadline := time.Now().Add(grace)
	for alive(pid, marker) {
		if time.Now().After(deadline) {
			if sig == syscall.SIGKILL {
				return true, fmt.Errorf("pid %d is still alive after SIGKILL", pid)
			}
			sig, killed = syscall.SIGKILL, true
			_ = syscall.Kill(pid, sig)
			deadline = time.Now().Add(10 * time.Second)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return killed, nil
}

// tail writes the last n lines of the file at path.
func tail(path string, n int) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "") + "\n", nil
}

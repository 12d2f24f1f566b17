package stand

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseFlavor(t *testing.T) {
	for in, want := range map[string]Flavor{"": Auto, "auto": Auto, "Native": Native, " docker ": Docker, "embedded": Embedded} {
		got, err := ParseFlavor(in)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	_, err := ParseFlavor("podman")
	require.ErrorContains(t, err, "use auto, docker, native or embedded")
}

func TestCurrentFlavorIsRecordedUnderDotStand(t *testing.T) {
	s := &Stand{Root: t.TempDir()}
	require.Equal(t, Flavor(""), s.Current())
	require.NoError(t, s.setCurrent(Native))
	require.Equal(t, Native, s.Current())
	require.FileExists(t, filepath.Join(s.Root, ".stand", "flavor"))
	require.NoError(t, s.setCurrent(""))
	require.Equal(t, Flavor(""), s.Current())
	_, err := s.Tool(t.Context(), "kafka-topics")
	require.ErrorContains(t, err, "make up")
}

func TestPortTakenIsAClearError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	err = checkPortsFree([]int{port})
	require.ErrorContains(t, err, "already taken by a process this repository did not start")
	ln.Close()
	require.NoError(t, checkPortsFree([]int{port}))
}

func TestDetachedProcessLifecycle(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "x.pid")
	cmd := exec.Command("sleep", "300")
	require.NoError(t, startDetached(cmd, filepath.Join(dir, "x.log"), pidFile))
	// Just after exec the kernel may show an empty command line for a moment
	// (the parent resumes before the new arguments are mapped).
	var pid int
	var ok bool
	require.Eventually(t, func() bool {
		pid, ok = livePid(pidFile, "sleep")
		return ok
	}, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, cmd.Process.Pid, pid)
	_, ok = livePid(pidFile, "kafka.Kafka")
	require.False(t, ok, "a pid whose command line lacks the marker is not ours")

	killed, err := stopPid(pid, "sleep", false, 5*time.Second)
	require.NoError(t, err)
	require.False(t, killed, "sleep ends on SIGTERM")
	_, ok = livePid(pidFile, "sleep")
	require.False(t, ok)

	require.NoError(t, os.WriteFile(pidFile, []byte(strconv.Itoa(999999999)), 0o644))
	_, ok = livePid(pidFile, "sleep")
	require.False(t, ok)
}

// After SIGSTOP every thread of the process is stopped before pause returns;
// a running process is not taken for a stopped one.
func TestWaitStoppedSeesEveryThreadStop(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	require.Error(t, waitStopped(pid, 50*time.Millisecond), "a running process")
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	require.NoError(t, waitStopped(pid, 5*time.Second))
	require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
	require.Eventually(t, func() bool { n, _ := runningThreads(pid); return n > 0 }, 5*time.Second, 10*time.Millisecond)
}

func TestTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	require.NoError(t, os.WriteFile(p, []byte("a\nb\nc\n"), 0o644))
	got, err := tail(p, 2)
	require.NoError(t, err)
	require.Equal(t, "b\nc\n", got)
}

// make status names a paused node and how to resume it.
func TestStatusShowsAPausedNode(t *testing.T) {
	st := Status{Flavor: Native, Leader: 1, Nodes: []NodeStatus{
		{ID: 1, Addr: "127.0.0.1:19092", Running: true, Process: "pid 10", Registered: true},
		{ID: 2, Addr: "127.0.0.1:19093", Running: true, Paused: true, Process: "pid 11", Registered: true},
	}}
	var b strings.Builder
	st.Print(&b)
	require.Contains(t, b.String(), "PAUSED (make resume-node N=2), pid 11")
	require.Contains(t, b.String(), "running, pid 10")
}

package debezium

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// Worker kills and starts the Kafka Connect worker.
type Worker interface {
	// Kill ends the worker with SIGKILL (kill -9: no shutdown, no offset
	// flush, no leave from its group) and returns once it is gone, with
	// what it killed ("pid 1234").
	Kill(ctx context.Context) (string, error)
	// Start starts it again and returns once its REST API serves.
	Start(ctx context.Context) error
	// PID is the worker's process id on this machine (0 when it runs in a
	// container).
	PID(ctx context.Context) (int, error)
	// Ready says whether Kill and Start can work: the worker runs under
	// this control. The demo asks before it starts.
	Ready(ctx context.Context) error
}

// StandWorker is the stand's connect service, through stand control: the
// pid `scripts/brewstand services status` shows, and `scripts/brewstand
// services up connect`.
type StandWorker struct {
	S   *stand.Stand
	err error // why there is none
}

// NewStandWorker finds the stand of this checkout; its progress goes to out.
// Without one it returns the error, and a StandWorker whose Ready says it.
func NewStandWorker(out io.Writer) (StandWorker, error) {
	s, err := stand.Find()
	if err != nil {
		err = fmt.Errorf("the demo kills and restarts the connect service, so it runs in a checkout of the course: %w", err)
		return StandWorker{err: err}, err
	}
	s.Out = out
	return StandWorker{S: s}, nil
}

// Ready is nil when the stand of this checkout runs the connect service.
func (w StandWorker) Ready(ctx context.Context) error {
	if w.err != nil {
		return w.err
	}
	if _, up := w.status(ctx); !up {
		return fmt.Errorf("the connect service is not running: `make services` starts it")
	}
	return nil
}

func (w StandWorker) status(ctx context.Context) (stand.ServiceStatus, bool) {
	for _, st := range w.S.ServiceStatuses(ctx) {
		if st.Name == "connect" {
			return st, st.Running
		}
	}
	return stand.ServiceStatus{}, false
}

// Kill sends SIGKILL to the worker's process (or `docker kill` to its
// container on the docker stand) and waits until it is gone.
func (w StandWorker) Kill(ctx context.Context) (string, error) {
	st, up := w.status(ctx)
	if !up {
		return "", fmt.Errorf("the connect service is not running: `make services` starts it")
	}
	switch {
	case strings.HasPrefix(st.Process, "pid "):
		pid, err := strconv.Atoi(strings.TrimPrefix(st.Process, "pid "))
		if err != nil {
			return "", fmt.Errorf("connect's process %q: %w", st.Process, err)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return "", fmt.Errorf("kill -9 %d (connect): %w", pid, err)
		}
	case strings.HasPrefix(st.Process, "container "):
		name := strings.TrimPrefix(st.Process, "container ")
		if out, err := exec.CommandContext(ctx, "docker", "kill", "--signal", "KILL", name).CombinedOutput(); err != nil {
			return "", fmt.Errorf("docker kill %s: %v: %s", name, err, strings.TrimSpace(string(out)))
		}
	default:
		return "", fmt.Errorf("connect runs as %q: neither a pid nor a container", st.Process)
	}
	// Gone means its process ended and its port is closed: a JVM that got
	// SIGKILL still accepts connections for a moment while it exits, and a
	// restart in that moment would find the port held.
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(stand.ConnectPort))
	err := brewkit.WaitFor(ctx, 30*time.Second, 50*time.Millisecond, func() bool {
		if _, up := w.status(ctx); up {
			return false
		}
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return false
		}
		return true
	})
	if err != nil {
		return st.Process, fmt.Errorf("connect (%s) still runs after SIGKILL", st.Process)
	}
	return st.Process, nil
}

// PID is the pid `scripts/brewstand services status` shows (0 for a container).
func (w StandWorker) PID(ctx context.Context) (int, error) {
	st, up := w.status(ctx)
	if !up {
		return 0, fmt.Errorf("the connect service is not running: `make services` starts it")
	}
	if !strings.HasPrefix(st.Process, "pid ") {
		return 0, nil
	}
	return strconv.Atoi(strings.TrimPrefix(st.Process, "pid "))
}

// Start is `scripts/brewstand services up connect`.
func (w StandWorker) Start(ctx context.Context) error {
	return w.S.StartServices(ctx, "connect")
}

package backpressure

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Proc is a courier process a demo started (Start), and what it reported.
type Proc struct {
	Started  time.Time
	cmd      *exec.Cmd
	stderr   bytes.Buffer
	assigned chan struct{}
	done     chan struct{}
	err      error

	mu         sync.Mutex
	last       Report
	peak       Report // the largest queue and RSS seen
	reads      []Report
	stopped    *Report
	assignedAt time.Time
	exitedAt   time.Time
}

// Start runs command (a program and its `courier` subcommand) as a courier
// process for c against cfg's cluster and the partner at addr. A cancelled
// ctx stops it with SIGTERM, and SIGKILL 10 s later.
func Start(ctx context.Context, cfg brewkit.Config, command []string, c Courier, addr string) (*Proc, error) {
	cmd := brewkit.Command(ctx, cfg, command, ChildArgs(c, addr)...)
	p := &Proc{cmd: cmd, assigned: make(chan struct{}), done: make(chan struct{})}
	cmd.Stderr = &p.stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.Started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting a courier process: %w", err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var r Report
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				continue
			}
			p.note(r)
		}
		err := cmd.Wait()
		p.mu.Lock()
		p.exitedAt = time.Now()
		p.mu.Unlock()
		if err != nil && !brewkit.Crashed(err) {
			p.err = processError(err, p.stderr.Bytes())
		}
		close(p.done)
	}()
	return p, nil
}

func (p *Proc) note(r Report) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch r.Kind {
	case "assigned":
		if p.assignedAt.IsZero() {
			p.assignedAt = time.Now()
			close(p.assigned)
		}
	case "read":
		p.reads = append(p.reads, r)
	case "sample", "stopped":
		p.last = r
		p.peak.Queue = max(p.peak.Queue, r.Queue)
		p.peak.RSS = max(p.peak.RSS, r.RSS)
		p.peak.PeakRSS = max(p.peak.PeakRSS, r.PeakRSS)
		if r.Kind == "stopped" {
			p.stopped = &r
		}
	}
}

// WaitAssigned waits for the process's first assignment, at most limit.
func (p *Proc) WaitAssigned(ctx context.Context, limit time.Duration) error {
	select {
	case <-p.assigned:
		return nil
	case <-p.done:
		if p.err != nil {
			return p.err
		}
		return errors.New("the courier process ended before it joined the group")
	case <-time.After(limit):
		return fmt.Errorf("the courier process got no partitions within %s", limit)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// AssignedAfter is how long after its start the process got its partitions.
func (p *Proc) AssignedAfter() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.assignedAt.Sub(p.Started)
}

// Last is the latest sample; Peak holds the largest queue and RSS seen.
func (p *Proc) Last() Report { p.mu.Lock(); defer p.mu.Unlock(); return p.last }
func (p *Proc) Peak() Report { p.mu.Lock(); defer p.mu.Unlock(); return p.peak }

// Reads are the records the process reported reading (Courier.Reads).
func (p *Proc) Reads() []Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Report(nil), p.reads...)
}

// Stopped is the process's report of its graceful stop; nil when it did not
// stop gracefully.
func (p *Proc) Stopped() *Report { p.mu.Lock(); defer p.mu.Unlock(); return p.stopped }

// Signal sends sig to the process.
func (p *Proc) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Wait waits for the process to end, at most limit, and returns when it
// did; an error is its failure (a SIGKILL is none).
func (p *Proc) Wait(limit time.Duration) (time.Time, error) {
	select {
	case <-p.done: // ended already: its own error, whatever the limit (0 too)
	default:
		select {
		case <-p.done:
		case <-time.After(limit):
			p.cmd.Process.Kill() //nolint:errcheck // it is ending anyway
			<-p.done
			return time.Now(), fmt.Errorf("the courier process did not end within %s", limit)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitedAt, p.err
}

// Done is closed once the process has ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// processError is the failure of a courier process that ended with waitErr
// after writing stderr. Run by Child, it writes one line as it fails, naming
// itself ("backpressure courier: ..."): that line is the error, and the
// program's own one line holds it. Anything else it wrote (a panic's trace)
// goes on to this program's stderr, and the error is the exit status.
func processError(waitErr error, stderr []byte) error {
	if msg := strings.TrimSpace(string(stderr)); msg != "" && !strings.Contains(msg, "\n") {
		return errors.New(msg)
	}
	os.Stderr.Write(stderr) //nolint:errcheck // best effort
	return fmt.Errorf("the courier process: %w", waitErr)
}

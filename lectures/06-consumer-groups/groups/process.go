package groups

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Process is a member running as a process of its own, so that it can be
// killed like a crashed machine. Its command is a program's member mode
// (ServeProcess), which prints the member's events as JSON lines.
type Process struct {
	Name    string
	cmd     *exec.Cmd
	done    chan struct{}
	stopped atomic.Bool // Signal was called: the process ends because it was asked to
}

// StartProcess runs m through command and hands each event it prints to
// emit. If the process ends without Signal or Stop asking it to (its fetches
// refused, its cluster gone), its error is recorded with Fail: the member's
// own one-line message, which WaitFor and Sleep then end with.
func (l *Log) StartProcess(cfg brewkit.Config, command []string, m Member, emit func(Event)) (*Process, error) {
	cmd := brewkit.Command(context.Background(), cfg, command, "-name", m.Name, "-group", m.Group, "-topic", m.Topic,
		"-protocol", string(m.Protocol), "-work", m.Work.String())
	var stderr bytes.Buffer // the member writes there only as it ends
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting member %s: %w", m.Name, err)
	}
	p := &Process{Name: m.Name, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var e Event
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				emit(e)
			}
		}
		err := cmd.Wait()
		if p.stopped.Load() {
			// Asked to end, it says "member m1: interrupted": no news. Pass
			// on anything else it said as it left, unless another member's
			// failure stopped it: that one line is what the program says.
			if msg := strings.TrimSpace(stderr.String()); !strings.HasSuffix(msg, ": interrupted") && l.Err() == nil {
				os.Stderr.Write(stderr.Bytes()) //nolint:errcheck // best effort
			}
			return
		}
		l.Fail(ProcessError("member "+m.Name, err, stderr.Bytes()))
	}()
	return p, nil
}

// Signal sends sig to the process: SIGTERM to leave the group cleanly,
// SIGKILL to vanish.
func (p *Process) Signal(sig syscall.Signal) {
	p.stopped.Store(true)
	p.cmd.Process.Signal(sig) //nolint:errcheck // gone already is fine
}

// Stop sends sig and waits until the process has ended and its output is read.
func (p *Process) Stop(sig syscall.Signal) {
	p.Signal(sig)
	<-p.done
}

// ProcessError is the error of a child process that ended with waitErr
// (nil: it ended by itself) after writing stderr. A child run by
// brewkit.Main writes one line as it fails, naming itself: that line is the
// error. Anything else it wrote (a panic's trace) goes on to this program's
// stderr, and the error is name and the exit status.
func ProcessError(name string, waitErr error, stderr []byte) error {
	if msg := strings.TrimSpace(string(stderr)); msg != "" && !strings.Contains(msg, "\n") {
		return errors.New(msg)
	}
	os.Stderr.Write(stderr) //nolint:errcheck // best effort
	if waitErr == nil {
		return fmt.Errorf("%s ended by itself", name)
	}
	return fmt.Errorf("%s: %w", name, waitErr)
}

// ServeProcess is the member side of StartProcess: a program's member mode
// (`rebalance-timeline member ...`) runs one member from args and prints its
// events as JSON lines on stdout.
func ServeProcess(name string, args []string) {
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	var m Member
	fs.StringVar(&m.Name, "name", "m", "member name")
	fs.StringVar(&m.Group, "group", "", "group")
	fs.StringVar(&m.Topic, "topic", "", "topic")
	proto := fs.String("protocol", string(Cooperative), ProtocolUsage)
	fs.DurationVar(&m.Work, "work", 2*time.Millisecond, "time per record")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	var fc brewkit.FlagCheck
	p, err := ParseProtocol(*proto)
	fc.Name("name", m.Name)
	fc.Name("group", m.Group)
	fc.Topic("topic", m.Topic)
	fc.Require(err == nil, "protocol", *proto, "use eager, cooperative or consumer")
	fc.ExitOnUsageError(name)
	m.Protocol = p
	brewkit.Main(name+" "+m.Name, func(ctx context.Context, cfg brewkit.Config) error {
		var mu sync.Mutex
		enc := json.NewEncoder(os.Stdout)
		return m.Run(ctx, cfg, func(e Event) {
			mu.Lock()
			defer mu.Unlock()
			enc.Encode(e) //nolint:errcheck // the parent reads it
		})
	})
}

package stand

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// hostProc is what every service run on this machine shares: its folder
// .stand/services/NAME, a pid file, a log, and a marker on its command line
// (a path of this checkout's, so that a recycled pid or another checkout's
// service is not taken for ours). It is started detached, as the native
// stand's JVMs are, so it outlives the brewstand command.
type hostProc struct {
	s      *Stand
	name   string
	marker string
	stopBy syscall.Signal // the signal of a clean, quick shutdown
	grace  time.Duration  // how long it gets before SIGKILL
}

func (h hostProc) dir(parts ...string) string { return h.s.serviceDir(h.name, parts...) }
func (h hostProc) pidFile() string            { return h.dir(h.name + ".pid") }
func (h hostProc) logFile() string            { return h.dir("logs", h.name+".log") }

func (h hostProc) running() (bool, string) {
	pid, ok := livePid(h.pidFile(), h.marker)
	if !ok {
		return false, ""
	}
	return true, fmt.Sprintf("pid %d", pid)
}

// detach starts cmd in the background with its output in the service's log.
func (h hostProc) detach(cmd *exec.Cmd) error {
	if err := os.MkdirAll(filepath.Dir(h.logFile()), 0o755); err != nil {
		return err
	}
	if err := startDetached(cmd, h.logFile(), h.pidFile()); err != nil {
		return fmt.Errorf("starting %s: %w", h.name, err)
	}
	return nil
}

// stop sends stopBy, then waits; after grace it kills the process and says so.
func (h hostProc) stop(context.Context) error {
	pid, ok := livePid(h.pidFile(), h.marker)
	if ok {
		if h.stopBy != syscall.SIGTERM {
			_ = syscall.Kill(pid, h.stopBy)
		}
		killed, err := stopPid(pid, h.marker, false, h.grace)
		if err != nil {
			return err
		}
		if killed {
			h.s.say("stand: %s did not shut down within %s and was killed", h.name, h.grace)
		}
	}
	os.Remove(h.pidFile())
	return nil
}

func (h hostProc) logs(w io.Writer) error {
	text, err := tail(h.logFile(), 200)
	if err != nil {
		return fmt.Errorf("no log of %s yet (%s)", h.name, h.s.rel(h.logFile()))
	}
	_, err = io.WriteString(w, text)
	return err
}

// hasState: a service that ran once has its log.
func (h hostProc) hasState() bool { return isFile(h.logFile()) }

// packages runs scripts/packages install ARGS (Debian's packages, as root),
// with a progress line and the time it took.
func (s *Stand) packages(ctx context.Context, what string, args ...string) error {
	s.say("stand: installing %s (once; scripts/packages install %s)...", what, joinArgs(args))
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.Root, "scripts", "packages"), append([]string{"install"}, args...)...)
	cmd.Dir = s.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("installing %s failed (%v): %s", what, err, lastLine(out))
	}
	s.say("stand: %s installed in %s", what, time.Since(start).Round(time.Second))
	return nil
}

// httpOK is nil when GET url answers 200.
func httpOK(ctx context.Context, url string) error {
	_, err := httpGet(ctx, url)
	return err
}

func httpGet(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("nothing answers on %s yet", req.URL.Host)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", req.URL.Path, resp.Status)
	}
	return body, nil
}

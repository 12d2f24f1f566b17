package stand

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// embedded runs the kfake simulation (stand/embedded) as a background process
// and controls its nodes through a small HTTP endpoint on ControlAddr.
type embedded struct{ s *Stand }

const embeddedMarker = "brew-embedded"

func (d *embedded) bin() string     { return d.s.shared("bin", embeddedMarker) }
func (d *embedded) dir() string     { return d.s.state("embedded") }
func (d *embedded) pidFile() string { return d.s.state("embedded.pid") }
func (d *embedded) logFile() string { return filepath.Join(d.dir(), "embedded.log") }
func (d *embedded) dataDir(int) string {
	return filepath.Join(d.dir(), "data")
}
func (d *embedded) ports() []int {
	return []int{ClientPort(1), ClientPort(2), ClientPort(3), 19095}
}

// EmbeddedStatus is what the embedded stand's control endpoint reports.
type EmbeddedStatus struct {
	Up     map[int]bool `json:"up"`
	Paused map[int]bool `json:"paused"`
}

func (d *embedded) status() (EmbeddedStatus, error) {
	var st EmbeddedStatus
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + ControlAddr + "/status")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st, err
}

func (d *embedded) post(path string) error {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post("http://"+ControlAddr+path, "text/plain", nil)
	if err != nil {
		return fmt.Errorf("the embedded stand's control endpoint does not answer: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s", strings.TrimSpace(string(msg)))
	}
	return nil
}

func (d *embedded) processUp() bool {
	_, ok := livePid(d.pidFile(), embeddedMarker)
	return ok
}

func (d *embedded) running(n int) (bool, string) {
	if !d.processUp() {
		return false, ""
	}
	st, err := d.status()
	if err != nil || !st.Up[n] {
		return false, ""
	}
	pid, _ := livePid(d.pidFile(), embeddedMarker)
	return true, fmt.Sprintf("pid %d (simulated node)", pid)
}

func (d *embedded) start(ctx context.Context) error {
	if d.processUp() {
		for _, n := range Nodes {
			if up, _ := d.running(n); !up {
				if err := d.startNode(ctx, n); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := os.MkdirAll(d.dir(), 0o755); err != nil {
		return err
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", d.bin(), "./stand/embedded")
	build.Dir = d.s.Root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the embedded stand: %v\n%s", err, out)
	}
	cmd := exec.Command(d.bin(), "-data", d.dataDir(0), "-control", ControlAddr)
	cmd.Dir = d.s.Root
	if err := startDetached(cmd, d.logFile(), d.pidFile()); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := d.status(); err == nil {
			break
		}
		if !d.processUp() || time.Now().After(deadline) {
			text, _ := tail(d.logFile(), 20)
			return fmt.Errorf("the embedded stand did not start; its log:\n%s", text)
		}
		time.Sleep(100 * time.Millisecond)
	}
	banner, _ := tail(d.logFile(), 6)
	d.s.say("%s", strings.TrimRight(banner, "\n"))
	return nil
}

func (d *embedded) stop(context.Context) error {
	if pid, ok := livePid(d.pidFile(), embeddedMarker); ok {
		if _, err := stopPid(pid, embeddedMarker, false, 20*time.Second); err != nil {
			return err
		}
	}
	os.Remove(d.pidFile())
	return nil
}

func (d *embedded) pauseNode(_ context.Context, n int) error {
	return d.post(fmt.Sprintf("/nodes/%d/pause", n))
}

func (d *embedded) resumeNode(_ context.Context, n int) error {
	return d.post(fmt.Sprintf("/nodes/%d/resume", n))
}

func (d *embedded) paused(n int) bool {
	if !d.processUp() {
		return false
	}
	st, err := d.status()
	return err == nil && st.Paused[n]
}

func (d *embedded) stopNode(_ context.Context, n int, _ bool) error {
	return d.post(fmt.Sprintf("/nodes/%d/stop", n))
}

func (d *embedded) startNode(_ context.Context, n int) error {
	return d.post(fmt.Sprintf("/nodes/%d/start", n))
}

func (d *embedded) logs(_ int, w io.Writer) error {
	text, err := tail(d.logFile(), 200)
	if err != nil {
		return fmt.Errorf("no log of the embedded stand yet (%s)", d.logFile())
	}
	_, err = io.WriteString(w, "(the embedded stand is one process; this is its log for all nodes)\n"+text)
	return err
}

func (d *embedded) reset(context.Context) error { return os.RemoveAll(d.dataDir(0)) }

func (d *embedded) tool(context.Context, int, string, []string) (*exec.Cmd, error) {
	return nil, fmt.Errorf("Kafka's command-line tools are not available on the embedded stand (a simulation without Kafka's jars); use the native stand: `make down && make up STAND=native`")
}

package stand

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// PrometheusPort is where Prometheus serves its API and UI (lecture 13).
const PrometheusPort = 19090

var prometheusService = Service{
	Name:    "prometheus",
	Port:    PrometheusPort,
	What:    "Prometheus scraping the nodes' metrics ports 17071-17073 and itself (stand/services/prometheus.yml)",
	Lecture: "lecture 13",
	Image:   "prom/prometheus:v2.42.0",
	ReadyIn: 30 * time.Second,
	ready:   func(ctx context.Context) error { return httpOK(ctx, "http://127.0.0.1:19090/-/ready") },
	host:    func(s *Stand) process { return newPrometheus(s) },
}

// prometheus runs Debian's prometheus on the course's configuration, with
// its time-series database in .stand/services/prometheus/data.
type prometheus struct{ hostProc }

func newPrometheus(s *Stand) *prometheus {
	p := &prometheus{hostProc{s: s, name: "prometheus", stopBy: syscall.SIGTERM, grace: 30 * time.Second}}
	p.marker = p.dataDir()
	return p
}

func (p *prometheus) dataDir() string { return p.dir("data") }

// PrometheusConfig is the course's Prometheus configuration, in the
// repository: lecture 13 adds its rules beside it.
func (s *Stand) PrometheusConfig() string {
	return filepath.Join(s.Root, "stand", "services", "prometheus.yml")
}

// prometheusBin is Debian's prometheus (package prometheus) when on PATH.
func prometheusBin() string {
	if p, err := exec.LookPath("prometheus"); err == nil {
		return p
	}
	return "/usr/bin/prometheus"
}

func (p *prometheus) installed() (bool, string) {
	if isFile(prometheusBin()) {
		return true, "Prometheus (" + prometheusBin() + ")"
	}
	return false, "Debian's prometheus, installed on first use (scripts/packages install --no-recommends prometheus, as root)"
}

func (p *prometheus) install(ctx context.Context) error {
	if err := p.s.packages(ctx, "Prometheus (Debian's prometheus)", "--no-recommends", "prometheus"); err != nil {
		return err
	}
	if !isFile(prometheusBin()) {
		return fmt.Errorf("the prometheus package is installed but %s is missing", prometheusBin())
	}
	return nil
}

// args are Prometheus' flags: the course's config, the stand's data folder,
// loopback only; --web.enable-lifecycle lets lecture 13 reload its rules
// with POST /-/reload.
func (p *prometheus) args() []string {
	return []string{
		"--config.file=" + p.s.PrometheusConfig(),
		"--storage.tsdb.path=" + p.dataDir(),
		"--web.listen-address=127.0.0.1:" + strconv.Itoa(PrometheusPort),
		"--web.enable-lifecycle",
	}
}

func (p *prometheus) start(context.Context) error {
	if !isFile(p.s.PrometheusConfig()) {
		return fmt.Errorf("no Prometheus configuration at %s", p.s.rel(p.s.PrometheusConfig()))
	}
	cmd := exec.Command(prometheusBin(), p.args()...)
	cmd.Dir = p.dir()
	return p.detach(cmd)
}

func (p *prometheus) reset(context.Context) error {
	return removeAll(p.dataDir(), filepath.Dir(p.logFile()), p.pidFile())
}

func (p *prometheus) hasState() bool { return p.hostProc.hasState() || isDir(p.dataDir()) }

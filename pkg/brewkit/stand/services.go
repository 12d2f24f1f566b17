package stand

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// A Service is a program beside the cluster that a lecture asks for by name:
// PostgreSQL and a Kafka Connect worker for lecture 11, Prometheus for
// lecture 13. Each runs as a process on this machine (installed on first use
// from Debian's packages or Maven Central) or, on the docker stand, as a
// compose service when its image is there. Its state (data, logs, pid file)
// lives under .stand/services/NAME.
//
// The secured SASL_SSL listener of lecture 12 is not a Service: it is
// configuration of the nodes themselves, not a process beside them.
type Service struct {
	Name       string
	Port       int           // on 127.0.0.1
	What       string        // what it is, for people
	Lecture    string        // who asks for it
	Image      string        // the docker stand's compose service runs this image
	NeedsKafka bool          // a Kafka client itself: it needs a real cluster up
	ReadyIn    time.Duration // how long a start may take before it is a failure

	ready func(ctx context.Context) error // nil once it serves on Port; one short probe
	host  func(s *Stand) process          // its process on this machine
}

// Addr is the service's address, 127.0.0.1:Port.
func (svc Service) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(svc.Port)) }

// A process is how one service runs: on this machine (a host process) or in
// a container of the docker stand.
type process interface {
	installed() (bool, string) // whether what it needs is here; if not, how it is installed on first use
	install(ctx context.Context) error
	start(ctx context.Context) error // installed, not running: start it in the background
	running() (bool, string)         // whether it runs, and a detail (pid, container)
	stop(ctx context.Context) error
	logFile() string // what to read when it fails
	logs(w io.Writer) error
	reset(ctx context.Context) error // remove its data; what was installed stays
	hasState() bool                  // whether it has data or logs to wipe
}

// services are the course's services, in the order they start.
var services = []Service{postgresService, prometheusService, connectService}

// Services lists the services beside the cluster, in the order they start.
func Services() []Service { return slices.Clone(services) }

// LookupService returns the service called name.
func LookupService(name string) (Service, error) {
	for _, svc := range services {
		if svc.Name == name {
			return svc, nil
		}
	}
	return Service{}, fmt.Errorf("unknown service %q: the services are %s", name, strings.Join(serviceNames(), ", "))
}

func serviceNames() []string {
	var names []string
	for _, svc := range services {
		names = append(names, svc.Name)
	}
	return names
}

// lookupServices resolves names, in the course's order, each once; no names
// are all the services.
func lookupServices(names []string) ([]Service, error) {
	for _, n := range names {
		if _, err := LookupService(n); err != nil {
			return nil, err
		}
	}
	var out []Service
	for _, svc := range services {
		if len(names) == 0 || slices.Contains(names, svc.Name) {
			out = append(out, svc)
		}
	}
	return out, nil
}

func (s *Stand) serviceDir(name string, parts ...string) string {
	return s.shared(append([]string{"services", name}, parts...)...)
}

// How a service runs is recorded at its start in .stand/services/NAME/how:
// "host" or "container", then a note for people (why a host process runs
// beside the docker stand).
const (
	runsOnHost      = "host"
	runsInContainer = "container"
	onHost          = "a host process" // the note when nothing more is to be said
)

func (s *Stand) recordHow(svc Service, how, note string) error {
	return os.WriteFile(s.serviceDir(svc.Name, "how"), []byte(how+"\n"+note+"\n"), 0o644)
}

func (s *Stand) readHow(svc Service) (how, note string) {
	b, err := os.ReadFile(s.serviceDir(svc.Name, "how"))
	if err != nil {
		return runsOnHost, ""
	}
	how, note, _ = strings.Cut(strings.TrimSpace(string(b)), "\n")
	return how, strings.TrimSpace(note)
}

// process returns how svc runs now (as its start recorded it).
func (s *Stand) process(svc Service) process {
	if how, _ := s.readHow(svc); how == runsInContainer {
		return &container{s: s, svc: svc}
	}
	return svc.host(s)
}

// placement decides how svc is to run on the stand that is up (f, "" for
// none): a host process, or on the docker stand its compose service when the
// image is there or can be pulled quickly. note says why, for the status.
func (s *Stand) placement(ctx context.Context, svc Service, f Flavor) (p process, how, note string, err error) {
	if svc.NeedsKafka {
		if err := kafkaFor(svc, f); err != nil {
			return nil, "", "", err
		}
		if !courseAnswers() {
			return nil, "", "", fmt.Errorf("%s needs the course cluster, and no node of the %s stand answers: see `make status`, `make restore`", svc.Name, f)
		}
	}
	if f != Docker {
		return svc.host(s), runsOnHost, onHost, nil
	}
	if why := imageUnavailable(ctx, svc.Image); why != "" {
		return svc.host(s), runsOnHost, fmt.Sprintf("a host process beside the docker stand (%s)", why), nil
	}
	return &container{s: s, svc: svc}, runsInContainer, "compose service " + svc.Name + " (" + svc.Image + ")", nil
}

// courseAnswers reports whether a node of the course cluster answers. A
// variable, so tests can stand in for the cluster.
var courseAnswers = func() bool { return answers(cluster().Brokers) }

// kafkaFor says why svc, a Kafka client, cannot run on the stand f.
func kafkaFor(svc Service, f Flavor) error {
	switch f {
	case "":
		return fmt.Errorf("%s needs the course cluster and no stand is up: run `make up STAND=native` first", svc.Name)
	case Embedded:
		return fmt.Errorf("%s needs real Kafka and the embedded stand is the kfake simulation: run `make down && make up STAND=native`", svc.Name)
	}
	return nil
}

// StartServices starts each named service that is not running, installing
// what it needs on first use, and waits until each is ready; a service that
// runs already is left alone. Every wait is bounded, and a failure names the
// service's log.
func (s *Stand) StartServices(ctx context.Context, names ...string) error {
	if s.instance != 0 {
		return errInstanceNoServices
	}
	if len(names) == 0 {
		return fmt.Errorf("name the services to start: %s", strings.Join(serviceNames(), ", "))
	}
	svcs, err := lookupServices(names)
	if err != nil {
		return err
	}
	for _, svc := range svcs {
		if err := s.startService(ctx, svc); err != nil {
			return err
		}
	}
	return nil
}

func (s *Stand) startService(ctx context.Context, svc Service) error {
	unlock, err := s.lockService(ctx, svc)
	if err != nil {
		return err
	}
	defer unlock()
	if p := s.process(svc); isRunning(p) {
		_, detail := p.running()
		if err := s.waitService(ctx, svc, p, time.Now()); err != nil {
			return err
		}
		s.say("stand: %s is already running on %s (%s)", svc.Name, svc.Addr(), detail)
		return nil
	}
	if who := s.portHolder(svc.Port); who != "" {
		return fmt.Errorf("%s cannot start: %s is held by a process this checkout did not start (%s); stop it first", svc.Name, svc.Addr(), who)
	}
	p, how, note, err := s.placement(ctx, svc, s.Current())
	if err != nil {
		return err
	}
	if ok, _ := p.installed(); !ok {
		if err := p.install(ctx); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(s.serviceDir(svc.Name), 0o755); err != nil {
		return err
	}
	if err := s.recordHow(svc, how, note); err != nil {
		return err
	}
	start := time.Now()
	if err := p.start(ctx); err != nil {
		return err
	}
	if err := s.waitService(ctx, svc, p, start); err != nil {
		return err
	}
	_, detail := p.running()
	s.say("stand: %s is ready on %s in %s (%s, %s)", svc.Name, svc.Addr(), time.Since(start).Round(100*time.Millisecond), note, detail)
	return nil
}

func isRunning(p process) bool { up, _ := p.running(); return up }

// waitService waits until svc answers, at most svc.ReadyIn from start; a
// process that exits meanwhile fails at once.
func (s *Stand) waitService(ctx context.Context, svc Service, p process, start time.Time) error {
	rel := s.rel(p.logFile())
	deadline := start.Add(svc.ReadyIn)
	last, lastSaid := "", time.Now()
	var gone time.Time // since when the process has not been seen running
	for {
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err := svc.ready(rctx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Right after the start the kernel may not show the new program's
		// command line yet (CI saw prometheus "exit" at 0.00 s and run on):
		// a process counts as gone once it has not run for 300 ms, or when
		// the wait is over.
		if isRunning(p) {
			gone = time.Time{}
		} else if gone.IsZero() {
			gone = time.Now()
		}
		if !gone.IsZero() && (time.Since(gone) >= 300*time.Millisecond || time.Now().After(deadline)) {
			return fmt.Errorf("%s exited while starting; see %s", svc.Name, rel)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not become ready on %s within %s (%v); see %s", svc.Name, svc.Addr(), svc.ReadyIn, err, rel)
		}
		if state := err.Error(); time.Since(start) > 3*time.Second && (state != last || time.Since(lastSaid) > 15*time.Second) {
			s.say("stand: waiting for %s: %s", svc.Name, state)
			last, lastSaid = state, time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// StopServices stops the named services (none: every one) that run, and
// says which it stopped.
func (s *Stand) StopServices(ctx context.Context, names ...string) error {
	if s.instance != 0 {
		return nil // an instance has none (instance.go)
	}
	svcs, err := lookupServices(names)
	if err != nil {
		return err
	}
	slices.Reverse(svcs) // connect before the database it reads
	for _, svc := range svcs {
		if err := s.stopService(ctx, svc, len(names) > 0); err != nil {
			return err
		}
	}
	return nil
}

func (s *Stand) stopService(ctx context.Context, svc Service, asked bool) error {
	p := s.process(svc)
	if !isRunning(p) {
		if asked {
			s.say("stand: %s is not running", svc.Name)
		}
		return nil
	}
	unlock, err := s.lockService(ctx, svc)
	if err != nil {
		return err
	}
	defer unlock()
	start := time.Now()
	if err := p.stop(ctx); err != nil {
		return fmt.Errorf("stopping %s: %w", svc.Name, err)
	}
	s.say("stand: %s stopped in %s", svc.Name, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// resetServices wipes every service's data and logs (what was installed
// stays); a running service is stopped first.
func (s *Stand) resetServices(ctx context.Context) error {
	if s.instance != 0 {
		return nil
	}
	if err := s.StopServices(ctx); err != nil {
		return err
	}
	for _, svc := range services {
		for _, p := range []process{svc.host(s), &container{s: s, svc: svc}} {
			if err := p.reset(ctx); err != nil {
				return fmt.Errorf("wiping %s: %w", svc.Name, err)
			}
		}
		os.Remove(s.serviceDir(svc.Name, "how"))
	}
	return nil
}

// ServiceLogs writes the recent log of the service called name to w.
func (s *Stand) ServiceLogs(name string, w io.Writer) error {
	svc, err := LookupService(name)
	if err != nil {
		return err
	}
	return s.process(svc).logs(w)
}

// ServiceStatus is one service in `make status`.
type ServiceStatus struct {
	Name    string
	Addr    string
	Running bool
	Process string // pid or container, when running
	Runs    string // how it runs: "a host process", "a host process beside the docker stand (...)"
	Ready   bool
	Why     string // why it is not ready, when it runs
}

// ServiceStatuses reports the services that run or have state.
func (s *Stand) ServiceStatuses(ctx context.Context) []ServiceStatus {
	if s.instance != 0 {
		return nil // an instance has none (instance.go)
	}
	var out []ServiceStatus
	for _, svc := range services {
		p := s.process(svc)
		up, detail := p.running()
		if !up && !p.hasState() {
			continue
		}
		st := ServiceStatus{Name: svc.Name, Addr: svc.Addr(), Running: up, Process: detail}
		if _, note := s.readHow(svc); up {
			st.Runs = note
			// A short probe: the dashboard asks for the status every few seconds.
			rctx, cancel := context.WithTimeout(ctx, time.Second)
			err := svc.ready(rctx)
			cancel()
			st.Ready = err == nil
			if err != nil {
				st.Why = err.Error()
			}
		}
		out = append(out, st)
	}
	return out
}

// PrintServices writes the services as a table (nothing when there are none).
func PrintServices(w io.Writer, svcs []ServiceStatus) {
	if len(svcs) == 0 {
		return
	}
	t := brewkit.NewTable(w, "SERVICE", "ADDRESS", "PROCESS", "READY")
	for _, st := range svcs {
		proc, ready := "stopped (its data is kept; `make reset` wipes it)", "-"
		if st.Running {
			proc = "running, " + st.Process
			ready = "ready"
			if !st.Ready {
				ready = "NOT READY: " + st.Why
			}
		}
		t.Row(st.Name, st.Addr, proc, ready)
	}
	t.Flush()
	for _, st := range svcs {
		if st.Running && st.Runs != "" && st.Runs != onHost {
			fmt.Fprintf(w, "%s: %s\n", st.Name, st.Runs) // beside the docker stand, or in a container
		}
	}
}

// lockService takes .stand/services/NAME.lock, so that two commands or
// tests starting the same service do not both start it; it waits at most
// five minutes (a first install takes one).
func (s *Stand) lockService(ctx context.Context, svc Service) (unlock func(), err error) {
	if err := os.MkdirAll(s.shared("services"), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(s.shared("services", svc.Name+".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the lock of %s: %w", svc.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := take(ctx, f, syscall.LOCK_EX, "the lock of "+svc.Name); err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}

// rel is path relative to the repository root, for messages.
func (s *Stand) rel(path string) string {
	if r, err := filepath.Rel(s.Root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// hasEntries reports whether dir exists with something in it.
func hasEntries(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) > 0
}

// removeAll removes paths, each as os.RemoveAll does.
func removeAll(paths ...string) error {
	var errs []error
	for _, p := range paths {
		errs = append(errs, os.RemoveAll(p))
	}
	return errors.Join(errs...)
}

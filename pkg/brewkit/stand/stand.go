// Package stand starts, stops and inspects the course cluster on whichever of
// its three stands is chosen: docker (three OfficialImage containers),
// native (three Kafka KafkaVersion JVMs from Maven Central jars) or embedded (the
// kfake simulation in package sim). The make verbs go through the brewstand
// command, and the lecture programs and tests through this package, so the
// logic exists once.
//
// A stand's state lives under .stand/ in the repository root: which flavor is
// up (.stand/flavor), pid files, node data and logs, downloaded jars.
package stand

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Flavor names a stand.
type Flavor string

// The three stands, and Auto, which picks one.
const (
	Auto     Flavor = "auto"
	Docker   Flavor = "docker"
	Native   Flavor = "native"
	Embedded Flavor = "embedded"
)

// Nodes are the course cluster's node ids.
var Nodes = []int{1, 2, 3}

// Fourth is the node lecture 15 adds when Brew opens more shops: a broker
// only, on the native and docker stands, started and stopped like the
// others (make start-node N=4) but never by make up. Its data stays until
// make reset, or until lecture 15's restore removes it.
const Fourth = 4

// ClientPort is node n's client port on 127.0.0.1 (node 4's is 19096:
// 19095 is the embedded stand's control port).
// On another instance of the stand, the instance's port for it.
func ClientPort(n int) int { return Port(contractClientPort(n)) }

func contractClientPort(n int) int {
	if n == Fourth {
		return 19096
	}
	return 19091 + n
}

// ControlAddr is where the embedded stand listens for stop-node and start-node.
const ControlAddr = "127.0.0.1:19095"

// ReadyTimeout bounds how long up and start-node wait for the cluster.
const ReadyTimeout = 3 * time.Minute

// ParseFlavor accepts auto, docker, native and embedded.
func ParseFlavor(s string) (Flavor, error) {
	switch f := Flavor(strings.ToLower(strings.TrimSpace(s))); f {
	case Auto, Docker, Native, Embedded:
		return f, nil
	case "":
		return Auto, nil
	}
	return "", fmt.Errorf("unknown stand %q: use auto, docker, native or embedded", s)
}

// Stand is the course cluster's stand in one repository checkout.
type Stand struct {
	Root string    // repository root
	Out  io.Writer // progress for people; io.Discard to silence

	instance int // 0: the student's stand; else another instance (instance.go)
}

// Find locates the repository root: $BREW_ROOT, else the nearest directory
// above the working directory holding go.work and stand/.
//
// It works on the instance BREW_STAND_INSTANCE names (0 when unset).
func Find() (*Stand, error) {
	inst, err := parseInstance(os.Getenv(EnvInstance))
	if err != nil {
		return nil, err
	}
	if inst != 0 && os.Getenv(brewkit.EnvBootstrap) == "" {
		// What this process starts, waits for and runs tools against is
		// the instance's cluster, not the contract ports.
		os.Setenv(brewkit.EnvBootstrap, Bootstrap(inst))
	}
	if root := os.Getenv("BREW_ROOT"); root != "" {
		return &Stand{Root: root, Out: os.Stderr, instance: inst}, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for {
		if isFile(filepath.Join(dir, "go.work")) && isDir(filepath.Join(dir, "stand")) {
			return &Stand{Root: dir, Out: os.Stderr, instance: inst}, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, errors.New("not inside the course repository (no go.work with stand/ above the working directory); set BREW_ROOT")
		}
		dir = parent
	}
}

// state is a path in this instance's state: .stand/ for instance 0,
// .stand/i<N>/ for another.
func (s *Stand) state(parts ...string) string {
	return filepath.Join(append([]string{s.Root, ".stand", InstanceName(s.instance)}, parts...)...)
}

// shared is a path in what every instance shares: downloaded jars and
// packages, built binaries, the services' state.
func (s *Stand) shared(parts ...string) string {
	return filepath.Join(append([]string{s.Root, ".stand"}, parts...)...)
}

func (s *Stand) say(format string, args ...any) {
	if s.Out != nil {
		fmt.Fprintf(s.Out, format+"\n", args...)
	}
}

// Current returns the flavor that is up, or "" when none is.
func (s *Stand) Current() Flavor {
	b, err := os.ReadFile(s.state("flavor"))
	if err != nil {
		return ""
	}
	return Flavor(strings.TrimSpace(string(b)))
}

func (s *Stand) setCurrent(f Flavor) error {
	if err := os.MkdirAll(s.state(), 0o755); err != nil {
		return err
	}
	if f == "" {
		err := os.Remove(s.state("flavor"))
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	return os.WriteFile(s.state("flavor"), []byte(string(f)+"\n"), 0o644)
}

// driver is what each flavor implements.
type driver interface {
	start(ctx context.Context) error // start every node that is not running
	stop(ctx context.Context) error  // stop every node
	stopNode(ctx context.Context, n int, kill bool) error
	startNode(ctx context.Context, n int) error
	pauseNode(ctx context.Context, n int) error  // freeze a running node: it keeps its connections, answers nothing
	resumeNode(ctx context.Context, n int) error // let a paused node go on
	paused(n int) bool
	running(n int) (bool, string) // whether node n's process runs, and a detail (pid, container)
	logs(n int, w io.Writer) error
	reset(ctx context.Context) error                                                   // remove the cluster's data
	tool(ctx context.Context, node int, name string, args []string) (*exec.Cmd, error) // node 0: any
	dataDir(n int) string                                                              // node n's log.dirs as Kafka's tools see it
	ports() []int                                                                      // every port the flavor listens on
}

func (s *Stand) driver(f Flavor) (driver, error) {
	if s.instance != 0 && f == Embedded {
		return nil, fmt.Errorf("stand instance %d runs a real stand (native or docker), not the embedded one", s.instance)
	}
	switch f {
	case Native:
		return &native{s: s}, nil
	case Docker:
		return &docker{s: s}, nil
	case Embedded:
		return &embedded{s: s}, nil
	}
	return nil, fmt.Errorf("no stand is up: start one with `make up`")
}

// node checks that n is a node of the cluster and returns the stand that is up.
func (s *Stand) node(n int) (Flavor, driver, error) {
	if !slices.Contains(Nodes, n) && n != Fourth {
		return "", nil, fmt.Errorf("node %d does not exist: the nodes are 1, 2 and 3 (and 4, lecture 15's broker)", n)
	}
	f, d, err := s.current()
	if err != nil {
		return f, d, err // no stand is up: say that first
	}
	if err := s.belongs(); err != nil {
		return "", nil, err
	}
	if n == Fourth && f == Embedded {
		return f, d, errors.New("node 4 runs on the real stands only (native, docker): the embedded simulation has three brokers")
	}
	return f, d, err
}

func (s *Stand) current() (Flavor, driver, error) {
	f := s.Current()
	d, err := s.driver(f)
	return f, d, err
}

// Choose resolves Auto: docker if an engine answers, else native if Java 17+ and
// Maven are there, else embedded. It says why.
func Choose(ctx context.Context, f Flavor) (Flavor, string) {
	if f != Auto {
		return f, "asked for"
	}
	noDocker := dockerAnswers(ctx)
	if noDocker == nil {
		return Docker, "a Docker engine and the Compose v2 plugin answer"
	}
	if err := javaAndMaven(ctx); err == nil {
		return Native, fmt.Sprintf("%v; Java 17+ and Maven are installed", noDocker)
	} else {
		return Embedded, fmt.Sprintf("%v, and the native stand is not possible (%v)", noDocker, err)
	}
}

// Up starts the stand of flavor f (Auto picks one) and waits until the quorum
// has a leader and all three brokers are registered. Up on a stand that is up
// starts whatever node is missing; Up while another flavor is up refuses.
func (s *Stand) Up(ctx context.Context, f Flavor) error {
	// auto on a stand that is up means that stand: `brewstand up` alone
	// restores whichever is up (resumes paused nodes, starts stopped ones).
	if cur := s.Current(); f == Auto && cur != "" {
		f = cur
	}
	f, why := Choose(ctx, f)
	if cur := s.Current(); cur != "" && cur != f {
		return fmt.Errorf("the %s stand is up; run `make down` before starting the %s stand", cur, f)
	}
	d, err := s.driver(f)
	if err != nil {
		return err
	}
	if s.Current() == "" {
		s.say("stand: %s (%s)", f, why)
		if err := checkPortsFree(d.ports()); err != nil {
			return err
		}
	} else {
		s.say("stand: %s is already up; starting any node that is not running", f)
	}
	if err := s.setCurrent(f); err != nil {
		return err
	}
	start := time.Now()
	for _, n := range Nodes {
		if d.paused(n) {
			if err := d.resumeNode(ctx, n); err != nil {
				return err
			}
			s.say("stand: node %d was paused; resumed", n)
		}
	}
	if err := d.start(ctx); err != nil {
		return err
	}
	if err := s.WaitReady(ctx, Nodes...); err != nil {
		return err
	}
	if f != Embedded {
		if err := ensureAdmin(ctx); err != nil {
			return err
		}
	}
	s.say("stand: %s is ready in %s: quorum has a leader, brokers 1, 2, 3 are registered", f, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// Down stops the services beside the cluster that run, then the stand that
// is up; with none up it does nothing more.
func (s *Stand) Down(ctx context.Context) error {
	if err := s.StopServices(ctx); err != nil {
		return err
	}
	f := s.Current()
	if f == "" {
		s.say("stand: nothing is up")
		return nil
	}
	d, err := s.driver(f)
	if err != nil {
		return err
	}
	for _, n := range Nodes {
		if d.paused(n) {
			if err := d.resumeNode(ctx, n); err != nil {
				return err
			}
		}
	}
	if err := d.stop(ctx); err != nil {
		return err
	}
	s.say("stand: %s is down", f)
	return s.setCurrent("")
}

// DownAll is Down on this instance and then on every other instance of
// the stand that is up in this checkout (what `make down` does: a test
// tier killed midway may leave an instance running).
func (s *Stand) DownAll(ctx context.Context) error {
	if err := s.Down(ctx); err != nil {
		return err
	}
	for _, o := range s.Instances() {
		if o.instance == s.instance {
			continue
		}
		s.say("stand: instance %d (%s) is up too; stopping it", o.instance, Bootstrap(o.instance))
		if err := o.Down(ctx); err != nil {
			return fmt.Errorf("stopping stand instance %d: %w", o.instance, err)
		}
	}
	return nil
}

// Reset stops the stand that is up and wipes the data of every flavor and of
// every service beside the cluster; the downloaded jars and packages stay.
func (s *Stand) Reset(ctx context.Context) error {
	if err := s.Down(ctx); err != nil {
		return err
	}
	for _, f := range []Flavor{Native, Embedded} {
		d, _ := s.driver(f)
		if err := d.reset(ctx); err != nil {
			return err
		}
	}
	if err := dockerAnswers(ctx); err == nil {
		d, _ := s.driver(Docker)
		if err := d.reset(ctx); err != nil {
			return err
		}
	}
	if err := s.resetServices(ctx); err != nil {
		return err
	}
	s.say("stand: data wiped; `make up` formats a fresh cluster")
	return nil
}

// StopNode stops node n of the stand that is up (SIGTERM, or SIGKILL with kill).
func (s *Stand) StopNode(ctx context.Context, n int, kill bool) error {
	f, d, err := s.node(n)
	if err != nil {
		return err
	}
	if up, _ := d.running(n); !up {
		return fmt.Errorf("node %d of the %s stand is not running", n, f)
	}
	how := "SIGTERM"
	switch {
	case f == Embedded:
		how = "simulated"
	case kill:
		how = "SIGKILL"
	}
	if d.paused(n) {
		if err := d.resumeNode(ctx, n); err != nil { // a frozen process would ignore SIGTERM
			return err
		}
	}
	start := time.Now()
	if err := d.stopNode(ctx, n, kill); err != nil {
		return err
	}
	s.say("stand: node %d of the %s stand stopped (%s) in %s", n, f, how, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// StartNode starts node n again on its data and waits until it is registered.
func (s *Stand) StartNode(ctx context.Context, n int) error {
	f, d, err := s.node(n)
	if err != nil {
		return err
	}
	if up, _ := d.running(n); up {
		return fmt.Errorf("node %d of the %s stand is already running", n, f)
	}
	start := time.Now()
	if err := d.startNode(ctx, n); err != nil {
		return err
	}
	if err := s.WaitReady(ctx, n); err != nil {
		return err
	}
	if f != Embedded {
		if err := ensureAdmin(ctx); err != nil {
			return err
		}
	}
	s.say("stand: node %d of the %s stand is back in %s", n, f, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// PauseNode freezes node n of the stand that is up, as a long GC pause, a
// frozen VM or a network stall would: SIGSTOP on native, docker pause on
// docker, a simulated stall on embedded. The node keeps its connections and
// its place in the metadata but answers nothing until ResumeNode.
func (s *Stand) PauseNode(ctx context.Context, n int) error {
	f, d, err := s.node(n)
	if err != nil {
		return err
	}
	if up, _ := d.running(n); !up {
		return fmt.Errorf("node %d of the %s stand is not running", n, f)
	}
	if d.paused(n) {
		return fmt.Errorf("node %d of the %s stand is already paused", n, f)
	}
	if err := d.pauseNode(ctx, n); err != nil {
		return err
	}
	s.say("stand: node %d of the %s stand paused (%s): it answers nothing until `make resume-node N=%d`", n, f, pauseHow[f], n)
	return nil
}

// ResumeNode lets a paused node n go on.
func (s *Stand) ResumeNode(ctx context.Context, n int) error {
	f, d, err := s.node(n)
	if err != nil {
		return err
	}
	if !d.paused(n) {
		return fmt.Errorf("node %d of the %s stand is not paused", n, f)
	}
	if err := d.resumeNode(ctx, n); err != nil {
		return err
	}
	s.say("stand: node %d of the %s stand resumed", n, f)
	return nil
}

var pauseHow = map[Flavor]string{Native: "SIGSTOP", Docker: "docker pause", Embedded: "simulated"}

// Logs writes the recent log of node n (or of the embedded stand) to w.
func (s *Stand) Logs(n int, w io.Writer) error {
	_, d, err := s.current()
	if err != nil {
		return err
	}
	return d.logs(n, w)
}

// Tool returns the command that runs Kafka's command-line tool name (for
// example kafka-metadata-quorum) against the stand that is up: from the jars
// on native, inside a running container on docker. Tools that talk to the
// cluster get --bootstrap-server; the embedded stand has no tools.
func (s *Stand) Tool(ctx context.Context, name string, args ...string) (*exec.Cmd, error) {
	return s.ToolOn(ctx, 0, name, args...)
}

// ToolOn is Tool on node n's machine (its container on docker), for tools
// that read a node's files, such as kafka-dump-log on DataDir(n).
func (s *Stand) ToolOn(ctx context.Context, n int, name string, args ...string) (*exec.Cmd, error) {
	_, d, err := s.current()
	if err != nil {
		return nil, err
	}
	if _, ok := tools[name]; !ok {
		return nil, fmt.Errorf("unknown Kafka tool %q; known: %s", name, strings.Join(toolNames(), ", "))
	}
	if n != 0 && !slices.Contains(Nodes, n) {
		return nil, fmt.Errorf("node %d does not exist: the nodes are 1, 2 and 3", n)
	}
	return d.tool(ctx, n, name, args)
}

// DataDir returns node n's data directory as Kafka's tools on this stand see it.
func (s *Stand) DataDir(n int) (string, error) {
	_, d, err := s.current()
	if err != nil {
		return "", err
	}
	return d.dataDir(n), nil
}

// tools maps the script names of Kafka's distribution to their main classes,
// and says whether the tool takes --bootstrap-server.
var tools = map[string]struct {
	class     string
	bootstrap bool
}{
	"kafka-metadata-quorum":     {"org.apache.kafka.tools.MetadataQuorumCommand", true},
	"kafka-topics":              {"org.apache.kafka.tools.TopicCommand", true},
	"kafka-consumer-groups":     {"org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", true},
	"kafka-console-producer":    {"org.apache.kafka.tools.ConsoleProducer", true},
	"kafka-console-consumer":    {"org.apache.kafka.tools.consumer.ConsoleConsumer", true},
	"kafka-get-offsets":         {"org.apache.kafka.tools.GetOffsetShell", true},
	"kafka-leader-election":     {"org.apache.kafka.tools.LeaderElectionCommand", true},
	"kafka-dump-log":            {"kafka.tools.DumpLogSegments", false},
	"kafka-transactions":        {"org.apache.kafka.tools.TransactionsCommand", true},
	"kafka-share-groups":        {"org.apache.kafka.tools.consumer.group.ShareGroupCommand", true},
	"kafka-features":            {"org.apache.kafka.tools.FeatureCommand", true},
	"kafka-configs":             {"org.apache.kafka.tools.ConfigCommand", true},
	"kafka-acls":                {"org.apache.kafka.tools.AclCommand", true},
	"kafka-reassign-partitions": {"org.apache.kafka.tools.reassign.ReassignPartitionsCommand", true},
}

// A Tool is one of Kafka's command-line tools the stand runs.
type Tool struct {
	Name      string // the script name in Kafka's distribution, without .sh
	Class     string // its main class
	Bootstrap bool   // whether it talks to the cluster with --bootstrap-server
}

// Tools lists the tools the stand runs, by name. The docker stand-in image
// gets one /opt/kafka/bin/NAME.sh for each.
func Tools() []Tool {
	var out []Tool
	for _, n := range toolNames() {
		out = append(out, Tool{n, tools[n].class, tools[n].bootstrap})
	}
	return out
}

func toolNames() []string {
	var names []string
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// WaitReady waits until the quorum has a leader and nodes are registered brokers.
func (s *Stand) WaitReady(ctx context.Context, nodes ...int) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	cl, err := brewkit.NewClient(cluster())
	if err != nil {
		return err
	}
	defer cl.Close()
	last, lastSaid := "", time.Now()
	for {
		state, ok := readiness(ctx, cl, nodes)
		if ok {
			return nil
		}
		if state != last || time.Since(lastSaid) > 10*time.Second {
			s.say("stand: waiting: %s", state)
			last, lastSaid = state, time.Now()
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return ctx.Err() // Ctrl-C, not a stand that failed to start
			}
			return fmt.Errorf("the stand did not become ready within %s (%s); see `make logs N=1`", ReadyTimeout, state)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func readiness(ctx context.Context, cl *kgo.Client, nodes []int) (string, bool) {
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	md, err := kadm.NewClient(cl).BrokerMetadata(kadm.WithAuthorizedOps(rctx))
	if err != nil {
		return "no broker answers yet", false
	}
	have := md.Brokers.NodeIDs()
	for _, n := range nodes {
		if !slices.Contains(have, int32(n)) {
			return fmt.Sprintf("brokers registered: %v, want %v", have, nodes), false
		}
	}
	q, err := brewkit.DescribeQuorum(rctx, cl)
	if err != nil {
		return fmt.Sprintf("quorum: %v", err), false
	}
	if q.LeaderID < 0 {
		return "quorum has no leader yet", false
	}
	// Each node answers a request on its own client port: registered is not
	// yet reachable (a docker node just unpaused drops its first connections).
	for _, n := range nodes {
		if err := nodeAnswers(rctx, n); err != nil {
			return fmt.Sprintf("node %d does not answer on its port yet: %v", n, err), false
		}
	}
	return "", true
}

// nodeAnswers sends ApiVersions to node n alone, on a connection of its own.
func nodeAnswers(ctx context.Context, n int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(net.JoinHostPort("127.0.0.1", strconv.Itoa(ClientPort(n)))))
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = cl.Request(ctx, kmsg.NewPtrApiVersionsRequest())
	return err
}

// checkPortsFree fails when something already listens on one of ports.
func checkPortsFree(ports []int) error {
	for _, p := range ports {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		conn, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err == nil {
			conn.Close()
			return fmt.Errorf("port %s is already taken by a process this repository did not start; stop it (or point KAFKA_BOOTSTRAP at it) before `make up`", addr)
		}
	}
	return nil
}

func isFile(p string) bool { fi, err := os.Stat(p); return err == nil && fi.Mode().IsRegular() }
func isDir(p string) bool  { fi, err := os.Stat(p); return err == nil && fi.IsDir() }

// FindRunning returns the stand that is up in this checkout, reporting its
// progress on stderr, for a program that stops, starts or pauses nodes. what
// says what the program does, for the error when no stand is up:
// FindRunning("the drill stops and starts nodes").
func FindRunning(what string) (*Stand, error) {
	s, err := Find()
	if err != nil {
		return nil, err
	}
	if s.Current() == "" {
		return nil, fmt.Errorf("%s, so it needs a stand started from this checkout: run `make up` first", what)
	}
	s.Out = os.Stderr
	return s, nil
}

// ReadDataDir lists the names in a folder of node n's data directory (rel:
// relative to it, such as a partition's "topic-0"), on this machine for the
// native stand and inside the node's container for the docker stand.
func (s *Stand) ReadDataDir(ctx context.Context, n int, rel string) ([]string, error) {
	f, d, err := s.node(n)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(d.dataDir(n), rel)
	switch f {
	case Native:
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names, nil
	case Docker:
		out, err := exec.CommandContext(ctx, "docker", "exec", nodeContainer(n), "ls", "-1", dir).Output()
		if err != nil {
			return nil, fmt.Errorf("listing %s in %s: %w", dir, nodeContainer(n), err)
		}
		return strings.Fields(string(out)), nil
	}
	return nil, fmt.Errorf("the %s stand keeps no data directory of its own", f)
}

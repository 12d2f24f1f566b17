// Package lab runs a small Kafka cluster of its own beside the course stand,
// for what must not happen to the shared stand: a quorum made dynamic
// (kraft.version 1 cannot be undone) and controllers added and removed. The
// nodes are JVMs on the native stand's Kafka jars (Java and Maven fetch them
// once), on ports of their own, with their data in a temporary folder; Close
// stops them and deletes it.
package lab

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// The lab's ports, none of them the stand's: node n's clients on
// ClientBase+n, replication on 29300+n, its controller on ControllerBase+n.
// All lie below 32768: Linux takes the local ports of outgoing connections
// (and docker its published ports) from 32768-60999, and one of those may
// take a port while its node restarts (a CI run here lost a node that way).
const (
	ClientBase     = 19300
	internalBase   = 29300
	ControllerBase = 19310
)

// Lab is a running lab cluster.
type Lab struct {
	dir     string
	cluster string
	dirs    map[int32]string // each node's metadata log directory id
	procs   map[int32]*proc
	java    func(ctx context.Context, version, class string, args ...string) (*exec.Cmd, error)
	Voters  []int32 // the nodes formatted as the first voters (broker + controller)
	// Version is the Kafka release each node runs (stand.KafkaVersion
	// unless set before Format or Start).
	Version map[int32]string
	Say     func(string)
}

// proc is a node's JVM; done closes when it has ended.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// Addr is node n's client address.
func Addr(n int32) string { return fmt.Sprintf("127.0.0.1:%d", ClientBase+n) }

// ControllerAddr is node n's controller address.
func ControllerAddr(n int32) string { return fmt.Sprintf("127.0.0.1:%d", ControllerBase+n) }

// ErrPortsBusy says another lab (or anything else) holds the lab's ports.
var ErrPortsBusy = errors.New("the lab's ports are busy")

// New prepares a lab whose nodes 1..voters are brokers and controllers,
// formatted as the quorum's initial voters (a dynamic quorum, KIP-853).
// It checks Java and the jars, and that the ports are free.
func New(ctx context.Context, s *stand.Stand, voters int, say func(string)) (*Lab, error) {
	for n := int32(1); n <= int32(voters)+1; n++ {
		for _, p := range []int32{ClientBase + n, internalBase + n, ControllerBase + n} {
			c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p), 200*time.Millisecond)
			if err == nil {
				c.Close()
				return nil, fmt.Errorf("%w: 127.0.0.1:%d answers (a lab left running? its JVMs are `java ... kafka.Kafka .../brew-lab-*`)", ErrPortsBusy, p)
			}
		}
	}
	if _, err := s.FetchJars(ctx); err != nil {
		return nil, fmt.Errorf("the lab runs Kafka's jars with Java: %w", err)
	}
	dir, err := os.MkdirTemp("", "brew-lab-")
	if err != nil {
		return nil, err
	}
	l := &Lab{dir: dir, cluster: uuid(), dirs: map[int32]string{}, procs: map[int32]*proc{}, java: s.JavaRelease, Version: map[int32]string{}, Say: say}
	for n := int32(1); n <= int32(voters); n++ {
		l.Voters = append(l.Voters, n)
	}
	return l, nil
}

// Config is how programs reach the lab's brokers.
func (l *Lab) Config() brewkit.Config {
	var seeds []string
	for _, n := range l.Voters {
		seeds = append(seeds, Addr(n))
	}
	return brewkit.Config{Brokers: seeds, Timeout: 30 * time.Second}
}

// version is the release node n runs.
func (l *Lab) version(n int32) string {
	if v := l.Version[n]; v != "" {
		return v
	}
	return stand.KafkaVersion
}

// Directory is node n's metadata log directory id, as formatted.
func (l *Lab) Directory(n int32) [16]byte {
	var id [16]byte
	b, _ := base64.RawURLEncoding.DecodeString(l.dirs[n])
	copy(id[:], b)
	return id
}

// uuid is a Kafka Uuid as the tools print it: 16 random bytes, base64url.
func uuid() string {
	var b [16]byte
	rand.Read(b[:]) //nolint:errcheck // never fails
	b[0] &= 0x7f    // Kafka's random Uuids are never negative in their first long
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// properties is node n's configuration: a broker and controller when it is
// one of the first voters, a controller only otherwise.
func (l *Lab) properties(n int32) string {
	var bootstrap []string
	for _, v := range l.Voters {
		bootstrap = append(bootstrap, ControllerAddr(v))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "node.id=%d\n", n)
	fmt.Fprintf(&b, "controller.quorum.bootstrap.servers=%s\n", strings.Join(bootstrap, ","))
	fmt.Fprintf(&b, "controller.listener.names=CONTROLLER\n")
	fmt.Fprintf(&b, "log.dirs=%s\n", filepath.Join(l.dir, fmt.Sprintf("node%d", n)))
	if slices.Contains(l.Voters, n) {
		fmt.Fprintf(&b, "process.roles=broker,controller\n")
		fmt.Fprintf(&b, "listeners=CLIENT://%s,INTERNAL://127.0.0.1:%d,CONTROLLER://%s\n", Addr(n), internalBase+n, ControllerAddr(n))
		fmt.Fprintf(&b, "advertised.listeners=CLIENT://%s,INTERNAL://127.0.0.1:%d,CONTROLLER://%s\n", Addr(n), internalBase+n, ControllerAddr(n))
		fmt.Fprintf(&b, "inter.broker.listener.name=INTERNAL\n")
	} else {
		fmt.Fprintf(&b, "process.roles=controller\n")
		fmt.Fprintf(&b, "listeners=CONTROLLER://%s\n", ControllerAddr(n))
		fmt.Fprintf(&b, "advertised.listeners=CONTROLLER://%s\n", ControllerAddr(n))
	}
	b.WriteString(`listener.security.protocol.map=CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT
num.partitions=3
default.replication.factor=3
min.insync.replicas=2
auto.create.topics.enable=false
group.initial.rebalance.delay.ms=0
offsets.topic.replication.factor=3
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
transaction.state.log.num.partitions=3
share.coordinator.state.topic.replication.factor=3
share.coordinator.state.topic.min.isr=2
share.coordinator.state.topic.num.partitions=1
replica.lag.time.max.ms=10000
`)
	return b.String()
}

// Format writes node n's storage: the first voters with
// --initial-controllers (which makes the quorum dynamic), any other node
// with --no-initial-controllers (it joins as an observer until added).
func (l *Lab) Format(ctx context.Context, n int32) error {
	if l.dirs[n] == "" {
		l.dirs[n] = uuid()
	}
	props := filepath.Join(l.dir, fmt.Sprintf("node%d.properties", n))
	if err := os.WriteFile(props, []byte(l.properties(n)), 0o644); err != nil {
		return err
	}
	args := []string{"format", "--cluster-id", l.cluster, "--config", props}
	if slices.Contains(l.Voters, n) {
		var initial []string
		for _, v := range l.Voters {
			if l.dirs[v] == "" {
				l.dirs[v] = uuid()
			}
			initial = append(initial, fmt.Sprintf("%d@127.0.0.1:%d:%s", v, ControllerBase+v, l.dirs[v]))
		}
		args = append(args, "--initial-controllers", strings.Join(initial, ","))
	} else {
		args = append(args, "--no-initial-controllers")
	}
	cmd, err := l.java(ctx, l.version(n), "kafka.tools.StorageTool", args...)
	if err != nil {
		return err
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("formatting lab node %d: %v\n%s", n, err, out)
	}
	return nil
}

// FormatVoters formats the first voters together: they share the
// --initial-controllers list, directory ids included.
func (l *Lab) FormatVoters(ctx context.Context) error {
	for _, v := range l.Voters {
		l.dirs[v] = uuid()
	}
	for _, v := range l.Voters {
		if err := l.Format(ctx, v); err != nil {
			return err
		}
	}
	return nil
}

// Start starts node n's JVM, its output in the lab's folder. The JVM lives
// until Stop or Close (or ctx).
func (l *Lab) Start(ctx context.Context, n int32) error {
	cmd, err := l.java(ctx, l.version(n), "kafka.Kafka", filepath.Join(l.dir, fmt.Sprintf("node%d.properties", n)))
	if err != nil {
		return err
	}
	out, err := os.OpenFile(filepath.Join(l.dir, fmt.Sprintf("node%d.log", n)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = out, out
	// A node of the stand's size and JVM settings (the serial collector, the
	// client compiler: stand.GC and stand.JIT say why): the machine also
	// runs the stand's three.
	cmd.Env = append(os.Environ(), "JAVA_TOOL_OPTIONS=-Xms128m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Ctrl-C reaches the program, which stops the lab
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("starting lab node %d: %w", n, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	l.procs[n] = p
	go func() {
		cmd.Wait() //nolint:errcheck // its end is seen by Stop and by the cluster
		out.Close()
		close(p.done)
	}()
	return nil
}

// Stop stops node n (SIGTERM, SIGKILL after 20 s) and waits for it.
func (l *Lab) Stop(n int32) {
	p := l.procs[n]
	if p == nil {
		return
	}
	delete(l.procs, n)
	p.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // it may have ended
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill() //nolint:errcheck // it may have ended
		<-p.done
	}
}

// Log is the end of node n's output, for an error message.
func (l *Lab) Log(n int32) string {
	b, _ := os.ReadFile(filepath.Join(l.dir, fmt.Sprintf("node%d.log", n)))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}

// why names a node of nodes that has exited, with its log, or shows the
// first node's log.
func (l *Lab) why(nodes []int32) string {
	for n, p := range l.procs {
		select {
		case <-p.done:
			return fmt.Sprintf("node %d exited (%v); its log ends:\n%s", n, p.cmd.ProcessState, l.Log(n))
		default:
		}
	}
	return fmt.Sprintf("node %d's log ends:\n%s", nodes[0], l.Log(nodes[0]))
}

// Close kills every node and deletes the lab's folder.
func (l *Lab) Close() {
	// The lab and its data go away: no node needs a controlled shutdown
	// (stopped one by one, the last ones wait for a quorum already gone).
	for n, p := range l.procs {
		p.cmd.Process.Kill() //nolint:errcheck // it may have ended
		<-p.done
		delete(l.procs, n)
	}
	os.RemoveAll(l.dir) //nolint:errcheck // a temporary folder
}

// WaitBrokers waits until the first voters are registered brokers.
func (l *Lab) WaitBrokers(ctx context.Context, limit time.Duration) error {
	return l.WaitBroker(ctx, limit, l.Voters...)
}

// WaitBroker waits until nodes are registered, unfenced brokers.
func (l *Lab) WaitBroker(ctx context.Context, limit time.Duration, nodes ...int32) error {
	cl, err := brewkit.NewClient(l.Config())
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	err = brewkit.WaitFor(ctx, limit, 250*time.Millisecond, func() bool {
		bs, err := adm.ListBrokers(ctx)
		if err != nil {
			return false
		}
		for _, n := range nodes {
			if !slices.Contains(bs.NodeIDs(), n) {
				return false
			}
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("lab nodes %v did not register as brokers within %s; %s", nodes, limit, l.why(nodes))
	}
	return nil
}

package stand

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// native runs Kafka KafkaVersion as three JVMs from jars that Maven downloads once.
type native struct{ s *Stand }

const (
	kafkaJar    = "kafka_2.13-" + KafkaVersion + ".jar"
	toolsJar    = "kafka-tools-" + KafkaVersion + ".jar"
	serverLog4j = "log4j2.properties"       // each node logs to its logs/server.log
	toolsLog4j  = "tools-log4j2.properties" // the command-line tools warn on stderr
)

// lib is the folder of this release's jars: one per version, so that a
// checkout moved to another release never mixes two on the class path.
func (d *native) lib() string          { return d.s.shared("native", "kafka-"+KafkaVersion) }
func (d *native) nodeDir(n int) string { return d.s.state("native", fmt.Sprintf("node%d", n)) }
func (d *native) pidFile(n int) string { return d.s.state(fmt.Sprintf("native-%d.pid", n)) }
func (d *native) config(n int) string {
	if d.s.instance != 0 {
		return d.s.state("native", fmt.Sprintf("node%d.properties", n)) // written by instanceConfig
	}
	return d.contractConfig(n)
}

func (d *native) contractConfig(n int) string {
	return filepath.Join(d.s.Root, "stand", "native", fmt.Sprintf("node%d.properties", n))
}

// instanceConfig writes node n's properties for another instance of the
// stand: the contract file with the instance's ports and state folders.
func (d *native) instanceConfig(n int) error {
	if d.s.instance == 0 {
		return nil
	}
	b, err := os.ReadFile(d.contractConfig(n))
	if err != nil {
		return err
	}
	rel := func(p string) string { r, _ := filepath.Rel(d.s.Root, p); return filepath.ToSlash(r) + "/" }
	conf := instancePorts(d.s.instance, string(b))
	conf = strings.NewReplacer(".stand/native/", rel(d.s.state("native")), ".stand/tls/", rel(d.s.state("tls"))).Replace(conf)
	if err := os.MkdirAll(d.s.state("native"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(d.config(n), []byte(conf), 0o644)
}
func (d *native) marker(n int) string  { return d.config(n) }
func (d *native) dataDir(n int) string { return filepath.Join(d.nodeDir(n), "data") }
func (d *native) logDir(n int) string  { return filepath.Join(d.nodeDir(n), "logs") }
func (d *native) ports() []int {
	var ps []int
	for _, n := range Nodes {
		ps = append(ps, ClientPort(n), Port(29091+n), Port(39091+n), SecurePort(n), MTLSPort(n), MetricsPort(n))
	}
	return ps
}

func (d *native) running(n int) (bool, string) {
	pid, ok := livePid(d.pidFile(n), d.marker(n))
	if !ok {
		return false, ""
	}
	return true, fmt.Sprintf("pid %d", pid)
}

func (d *native) start(ctx context.Context) error {
	if err := javaAndMaven(ctx); err != nil {
		return err
	}
	if err := d.fetchJars(ctx); err != nil {
		return err
	}
	if _, err := d.s.FetchMetricsAgent(ctx); err != nil {
		return err
	}
	if err := d.s.EnsureTLS(); err != nil { // the secured listeners' key stores
		return err
	}
	for _, n := range Nodes {
		if err := d.format(ctx, n); err != nil {
			return err
		}
	}
	for _, n := range Nodes {
		if up, _ := d.running(n); up {
			continue
		}
		if err := d.startNode(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// fetchJars resolves Kafka's jars into .stand/native/kafka-VERSION once.
// Instances share that folder: an flock on kafka-VERSION.lock beside it makes
// a second process that needs the jars wait for the first one's Maven run
// (two at once fail copying the same artifact) and then find them there.
func (d *native) fetchJars(ctx context.Context) error {
	if isFile(filepath.Join(d.lib(), kafkaJar)) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(d.lib()), 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(d.lib()+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	if err := take(ctx, lock, syscall.LOCK_EX, "the lock of Kafka's jars"); err != nil {
		return err
	}
	defer lock.Close()
	if isFile(filepath.Join(d.lib(), kafkaJar)) {
		return nil // fetched by the process this one waited for
	}
	rel, _ := filepath.Rel(d.s.Root, d.lib())
	d.s.say("stand: downloading the Kafka %s jars from Maven Central into %s (once)...", KafkaVersion, rel)
	start := time.Now()
	cmd := exec.CommandContext(ctx, "mvn", "-q", "-B", "-f", filepath.Join(d.s.Root, "stand", "native", "pom.xml"),
		"-Dkafka.version="+KafkaVersion, "-Dlib.dir="+d.lib(), "dependency:copy-dependencies")
	cmd.Dir = d.s.Root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("maven could not fetch the Kafka jars (%v); its output:\n%s", err, out)
	}
	if !isFile(filepath.Join(d.lib(), kafkaJar)) {
		return fmt.Errorf("maven finished but %s is not in %s", kafkaJar, d.lib())
	}
	d.s.say("stand: jars ready in %s", time.Since(start).Round(time.Second))
	return nil
}

// java returns a command running Java with the stand's jars on the class path
// and the log4j2 configuration stand/native/<log4j>.
func (d *native) java(ctx context.Context, log4j, logDir string, args ...string) *exec.Cmd {
	base := []string{
		JIT,
		"-cp", filepath.Join(d.lib(), "*"),
		"-Dlog4j2.configurationFile=" + filepath.Join(d.s.Root, "stand", "native", log4j),
		"-Dkafka.logs.dir=" + logDir,
	}
	cmd := exec.CommandContext(ctx, javaBin(), append(base, args...)...)
	cmd.Dir = d.s.Root
	return cmd
}

// format writes node n's storage (meta.properties with the course cluster id)
// unless it is already formatted.
func (d *native) format(ctx context.Context, n int) error {
	if err := d.instanceConfig(n); err != nil {
		return fmt.Errorf("writing node %d's properties for instance %d: %w", n, d.s.instance, err)
	}
	if isFile(filepath.Join(d.dataDir(n), "meta.properties")) {
		return nil
	}
	if err := os.MkdirAll(d.logDir(n), 0o755); err != nil {
		return err
	}
	cmd := d.java(ctx, serverLog4j, d.logDir(n), "kafka.tools.StorageTool", "format",
		"--cluster-id", brewkit.ClusterID, "--config", d.config(n), "--ignore-formatted")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("formatting the storage of node %d: %v\n%s", n, err, out)
	}
	return nil
}

func (d *native) startNode(ctx context.Context, n int) error {
	if err := d.s.EnsureTLS(); err != nil {
		return err
	}
	if err := d.format(ctx, n); err != nil {
		return err
	}
	agent, err := d.s.FetchMetricsAgent(ctx)
	if err != nil {
		return err
	}
	if err := startDetached(d.nodeCmd(n, agent), filepath.Join(d.logDir(n), "stdout.log"), d.pidFile(n)); err != nil {
		return fmt.Errorf("starting node %d: %w", n, err)
	}
	return nil
}

// nodeCmd is node n's JVM, serving its metrics on 127.0.0.1:MetricsPort(n)
// through the JMX exporter's agent jar. Only the nodes get the agent: a tool
// run through d.java beside them would try to bind a node's metrics port,
// and a JVM whose agent fails does not start.
func (d *native) nodeCmd(n int, agent string) *exec.Cmd {
	args := []string{"-Xms256m", "-Xmx512m", GC, "-Djava.awt.headless=true"}
	if n != Fourth { // lecture 15's fourth node serves no metrics: Prometheus scrapes three
		args = append(args, javaAgent(agent, metricsAddr(n), d.s.MetricsConfig()))
	}
	// The JVM must outlive ctx and this process: no CommandContext here.
	return d.java(context.Background(), serverLog4j, d.logDir(n), append(args, "kafka.Kafka", d.config(n))...)
}

func (d *native) pauseFile(n int) string { return d.s.state(fmt.Sprintf("native-%d.paused", n)) }

func (d *native) pauseNode(_ context.Context, n int) error {
	pid, ok := livePid(d.pidFile(n), d.marker(n))
	if !ok {
		return fmt.Errorf("node %d is not running", n)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("pausing node %d (pid %d): %w", n, pid, err)
	}
	// kill returns once the signal is queued; each of the JVM's threads stops
	// when it next enters the kernel. Wait until all have, so that what the
	// caller does next happens against a frozen node.
	if err := waitStopped(pid, 5*time.Second); err != nil {
		return fmt.Errorf("pausing node %d: %w", n, err)
	}
	return os.WriteFile(d.pauseFile(n), []byte(strconv.Itoa(pid)+"\n"), 0o644)
}

func (d *native) resumeNode(_ context.Context, n int) error {
	if pid, ok := livePid(d.pidFile(n), d.marker(n)); ok {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			return fmt.Errorf("resuming node %d (pid %d): %w", n, pid, err)
		}
	}
	return os.Remove(d.pauseFile(n))
}

// paused: the pause file names the pid that is running now (a node started
// again since has another pid).
func (d *native) paused(n int) bool {
	b, err := os.ReadFile(d.pauseFile(n))
	if err != nil {
		return false
	}
	pid, ok := livePid(d.pidFile(n), d.marker(n))
	return ok && strings.TrimSpace(string(b)) == strconv.Itoa(pid)
}

func (d *native) stopNode(_ context.Context, n int, kill bool) error {
	pid, ok := livePid(d.pidFile(n), d.marker(n))
	if ok {
		killed, err := stopPid(pid, d.marker(n), kill, 60*time.Second)
		if err != nil {
			return fmt.Errorf("stopping node %d: %w", n, err)
		}
		if killed && !kill {
			d.s.say("stand: node %d did not shut down within 60 s of SIGTERM and was killed", n)
		}
	}
	os.Remove(d.pidFile(n))
	return nil
}

func (d *native) stop(ctx context.Context) error {
	// SIGTERM to all at once: each node shuts down while the others still form a quorum.
	all := append(slices.Clone(Nodes), Fourth)
	for _, n := range all {
		if pid, ok := livePid(d.pidFile(n), d.marker(n)); ok {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}
	for _, n := range all {
		if err := d.stopNode(ctx, n, false); err != nil {
			return err
		}
	}
	return nil
}

func (d *native) logs(n int, w io.Writer) error {
	path := filepath.Join(d.logDir(n), "server.log")
	text, err := tail(path, 200)
	if err != nil {
		return fmt.Errorf("no log for node %d yet (%s)", n, path)
	}
	_, err = io.WriteString(w, text)
	return err
}

func (d *native) reset(context.Context) error {
	for _, n := range append(slices.Clone(Nodes), Fourth) {
		if err := os.RemoveAll(d.nodeDir(n)); err != nil {
			return err
		}
	}
	return nil
}

func (d *native) tool(ctx context.Context, _ int, name string, args []string) (*exec.Cmd, error) {
	if !isFile(filepath.Join(d.lib(), kafkaJar)) {
		return nil, fmt.Errorf("the Kafka jars are not in %s yet: run `make up STAND=native`", d.lib())
	}
	t := tools[name]
	all := []string{t.class}
	if t.bootstrap {
		all = append(all, "--bootstrap-server", cluster().Bootstrap())
	}
	return d.java(ctx, toolsLog4j, os.TempDir(), append(all, args...)...), nil
}

// JIT is the JIT setting of every JVM the stand starts (the nodes, the
// tools, Connect): the client compiler (C1) only. A node's start is mostly
// JIT work, and on a two-core machine the server compiler (C2) compiling
// Kafka's start-up code is what a node waits for: measured here, one
// KRaft node took 5.4 CPU-seconds and 7-15 s to start with the default
// tiered JIT, 2.6 CPU-seconds and 4.5 s with C1 only, and a short
// ProducerPerformance load cost the node 9.7 CPU-seconds with the
// default, 5.7 with C1 only (the server compiler's work never pays back
// in runs this short). A stand restarts nodes in almost every fault it
// shows; a production node, which runs for months, keeps the default.
// The docker stand sets the same in KAFKA_JVM_PERFORMANCE_OPTS.
const JIT = "-XX:TieredStopAtLevel=1"

// GC is the garbage collector of every JVM the stand starts: the serial
// one. On two cores G1's concurrent and parallel threads cost a node's
// start more than they give a heap of 512 MB: measured here, three nodes'
// start and the 20 s after took 21.2 CPU-seconds with G1 and 16.3 with
// the serial collector, and lectures 02's and 07's tests on them the same
// (46.2 and 46.8 CPU-seconds). The docker stand and brewcontainers set the
// same in KAFKA_JVM_PERFORMANCE_OPTS; a production node keeps G1.
const GC = "-XX:+UseSerialGC"

// javaBin is $JAVA_HOME/bin/java when JAVA_HOME is set, else java on PATH.
func javaBin() string {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		return filepath.Join(home, "bin", "java")
	}
	return "java"
}

var javaVersion = regexp.MustCompile(`version "(\d+)`)

// javaAndMaven checks that Java 17+ and Maven are installed. A variable, so
// tests can stand in for the machine.
var javaAndMaven = func(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, javaBin(), "-version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("java is not installed (install a JDK 17 or newer)")
	}
	m := javaVersion.FindSubmatch(out)
	if m == nil {
		return fmt.Errorf("cannot read the Java version from %q", bytes.TrimSpace(out))
	}
	if v, _ := strconv.Atoi(string(m[1])); v < 17 {
		return fmt.Errorf("Java %d is too old: Kafka %s needs Java 17 or newer", v, KafkaMinor)
	}
	if _, err := exec.LookPath("mvn"); err != nil {
		return fmt.Errorf("maven (mvn) is not installed; it downloads the Kafka jars")
	}
	return nil
}

// JavaClass runs a main class from the native stand's Kafka jars (kafka-tools'
// ProducerPerformance, for example) with the log4j settings of the tools. The
// jars are there once the native stand has been started on this machine.
func (s *Stand) JavaClass(ctx context.Context, class string, args ...string) (*exec.Cmd, error) {
	d := &native{s: s}
	if !isFile(filepath.Join(d.lib(), toolsJar)) {
		return nil, fmt.Errorf("no Kafka %s jars in %s: run `make up STAND=native` once to download them", KafkaVersion, d.lib())
	}
	return d.java(ctx, toolsLog4j, os.TempDir(), append([]string{class}, args...)...), nil
}

// FetchJars makes sure Kafka KafkaVersion's jars are in .stand/native/kafka-VERSION (Maven
// fetches them once) and returns that folder. The docker stand-in image is
// built from them.
func (s *Stand) FetchJars(ctx context.Context) (string, error) {
	d := &native{s: s}
	if !isFile(filepath.Join(d.lib(), kafkaJar)) {
		if err := javaAndMaven(ctx); err != nil {
			return "", err
		}
	}
	if err := d.fetchJars(ctx); err != nil {
		return "", err
	}
	return d.lib(), nil
}

// ReleaseJars makes sure Kafka version's jars are in
// .stand/native/kafka-VERSION (Maven fetches them once, as for the course's
// own release) and returns that folder: lecture 15's lab runs the previous
// release beside the course's to roll it forward.
func (s *Stand) ReleaseJars(ctx context.Context, version string) (string, error) {
	if version == KafkaVersion {
		return s.FetchJars(ctx)
	}
	lib := s.shared("native", "kafka-"+version)
	if isFile(filepath.Join(lib, "kafka_2.13-"+version+".jar")) {
		return lib, nil
	}
	pom := filepath.Join(s.Root, "stand", "native", "pom.xml")
	if !isFile(pom) {
		return "", fmt.Errorf("the Kafka %s jars are not in %s and there is no %s to fetch them with: run this in the course's checkout", version, lib, pom)
	}
	if err := javaAndMaven(ctx); err != nil {
		return "", err
	}
	rel, _ := filepath.Rel(s.Root, lib)
	s.say("stand: downloading the Kafka %s jars from Maven Central into %s (once)...", version, rel)
	cmd := exec.CommandContext(ctx, "mvn", "-q", "-B", "-f", pom,
		"-Dkafka.version="+version, "-Dlib.dir="+lib, "dependency:copy-dependencies")
	cmd.Dir = s.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("maven could not fetch the Kafka %s jars (%v): %s", version, err, firstLine(out))
	}
	if !isFile(filepath.Join(lib, "kafka_2.13-"+version+".jar")) {
		return "", fmt.Errorf("maven finished but kafka_2.13-%s.jar is not in %s", version, lib)
	}
	return lib, nil
}

// JavaRelease is JavaClass on the jars of Kafka version (ReleaseJars fetches
// them first).
func (s *Stand) JavaRelease(ctx context.Context, version, class string, args ...string) (*exec.Cmd, error) {
	lib, err := s.ReleaseJars(ctx, version)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, javaBin(), append([]string{
		"-cp", filepath.Join(lib, "*"),
		"-Dlog4j2.configurationFile=" + filepath.Join(s.Root, "stand", "native", toolsLog4j),
		"-Dkafka.logs.dir=" + os.TempDir(),
		class,
	}, args...)...)
	cmd.Dir = s.Root
	return cmd, nil
}

// firstLine is the first line of a tool's output with text in it, without
// the terminal's colour codes: an error's one line.
func firstLine(out []byte) string {
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(ansi.ReplaceAllString(l, ""))
		if l != "" {
			return l
		}
	}
	return "no output"
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

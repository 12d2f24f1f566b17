package stand

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// ConnectPort is where the Kafka Connect worker serves its REST API (lecture 11).
const ConnectPort = 18083

// DebeziumVersion is the Debezium release of the connect service.
const DebeziumVersion = "3.6.1.Final"

// ConnectRuntimeVersion is the Kafka Connect worker's release: the newest
// connect-runtime Debezium 3.6.1.Final runs on. It is built against 4.3.0,
// and on connect-runtime 4.4.0 its connector's validate() passes but its
// task dies with NoClassDefFoundError org/apache/kafka/common/utils/Sanitizer
// (4.4.0 moved the class to ...utils.internals; measured on the stand). A
// worker is a client of the cluster: a 4.3 worker runs on the course's 4.4
// brokers.
const ConnectRuntimeVersion = "4.3.0"

// PostgresConnector is Debezium's PostgreSQL source connector class.
const PostgresConnector = "io.debezium.connector.postgresql.PostgresConnector"

// The worker's group and its internal topics, in the course cluster.
const (
	ConnectGroup         = "brew-connect"
	ConnectConfigsTopic  = "brew-connect-configs"
	ConnectOffsetsTopic  = "brew-connect-offsets"
	ConnectStatusesTopic = "brew-connect-status"
)

var connectService = Service{
	Name:       "connect",
	Port:       ConnectPort,
	What:       "a distributed Kafka Connect worker (group brew-connect) with Debezium's PostgreSQL connector",
	Lecture:    "lecture 11",
	Image:      "quay.io/debezium/connect:" + DebeziumVersion,
	NeedsKafka: true,
	ReadyIn:    3 * time.Minute,
	ready:      connectReady,
	host:       func(s *Stand) process { return newConnect(s) },
}

// connect runs org.apache.kafka.connect.cli.ConnectDistributed from jars
// Maven fetches once into .stand/services/connect/lib-KAFKA-DEBEZIUM.
type connect struct{ hostProc }

func newConnect(s *Stand) *connect {
	c := &connect{hostProc{s: s, name: "connect", stopBy: syscall.SIGTERM, grace: 60 * time.Second}}
	c.marker = c.workerConfig()
	return c
}

// lib is a folder per Kafka and Debezium release: a checkout moved to
// another never mixes two on the class path.
func (c *connect) lib() string          { return c.dir("lib-" + ConnectRuntimeVersion + "-" + DebeziumVersion) }
func (c *connect) workerConfig() string { return c.dir("worker.properties") }
func (c *connect) files(name string) string {
	return filepath.Join(c.s.Root, "stand", "services", "connect", name)
}

// connectJars are the jars whose presence means the fetch is complete.
var connectJars = []string{
	"connect-runtime-" + ConnectRuntimeVersion + ".jar",
	"debezium-connector-postgres-" + DebeziumVersion + ".jar",
}

func (c *connect) installed() (bool, string) {
	for _, j := range connectJars {
		if !isFile(filepath.Join(c.lib(), j)) {
			return false, fmt.Sprintf("connect-runtime %s and Debezium %s from Maven Central on first use (about 40 MB, Java 17+ and Maven)", ConnectRuntimeVersion, DebeziumVersion)
		}
	}
	return true, fmt.Sprintf("connect-runtime %s and Debezium %s in %s", ConnectRuntimeVersion, DebeziumVersion, c.s.rel(c.lib()))
}

func (c *connect) install(ctx context.Context) error {
	if err := javaAndMaven(ctx); err != nil {
		return fmt.Errorf("the connect service needs Java 17+ and Maven: %w", err)
	}
	c.s.say("stand: downloading connect-runtime %s and Debezium %s from Maven Central into %s (once)...", ConnectRuntimeVersion, DebeziumVersion, c.s.rel(c.lib()))
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mvn", c.mavenArgs()...)
	cmd.Dir = c.s.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		log := c.dir("maven.log")
		os.MkdirAll(c.dir(), 0o755)
		os.WriteFile(log, out, 0o644)
		return fmt.Errorf("maven could not fetch the connect jars (%v); see %s", err, c.s.rel(log))
	}
	if ok, _ := c.installed(); !ok {
		return fmt.Errorf("maven finished but %s lacks %s", c.s.rel(c.lib()), strings.Join(connectJars, " or "))
	}
	c.s.say("stand: connect jars ready in %s", time.Since(start).Round(time.Second))
	return nil
}

// mavenArgs copy the pom's dependencies into lib, with every repository
// mirrored to Central (settings.xml): some of Debezium's poms name
// repositories that cannot be reached from everywhere.
func (c *connect) mavenArgs() []string {
	return []string{"-q", "-B", "-s", c.files("settings.xml"), "-f", c.files("pom.xml"),
		"-Dconnect.version=" + ConnectRuntimeVersion, "-Ddebezium.version=" + DebeziumVersion,
		"-Dlib.dir=" + c.lib(), "dependency:copy-dependencies"}
}

// connectWorkerConfig is the distributed worker's configuration: the course
// cluster, group brew-connect, its internal topics with replication factor 3
// (few partitions: a demo's worker stores little), JSON without schema
// envelopes (readable in a console consumer; a connector may ask for more),
// REST on 127.0.0.1 only.
func connectWorkerConfig(bootstrap string) string {
	lines := []string{
		"# Written by the course stand (pkg/brewkit/stand) at every start of the connect service.",
		"bootstrap.servers=" + bootstrap,
		"group.id=" + ConnectGroup,
		"config.storage.topic=" + ConnectConfigsTopic,
		"offset.storage.topic=" + ConnectOffsetsTopic,
		"status.storage.topic=" + ConnectStatusesTopic,
		"config.storage.replication.factor=3",
		"offset.storage.replication.factor=3",
		"status.storage.replication.factor=3",
		"offset.storage.partitions=3",
		"status.storage.partitions=1",
		"key.converter=org.apache.kafka.connect.json.JsonConverter",
		"value.converter=org.apache.kafka.connect.json.JsonConverter",
		"key.converter.schemas.enable=false",
		"value.converter.schemas.enable=false",
		"offset.flush.interval.ms=1000",
		"listeners=http://127.0.0.1:" + strconv.Itoa(ConnectPort),
		"rest.advertised.host.name=127.0.0.1",
		"rest.advertised.port=" + strconv.Itoa(ConnectPort),
		// Every plugin on the class path has a ServiceLoader manifest: no
		// scan of 40 MB of jars at each start.
		"plugin.discovery=service_load",
	}
	return strings.Join(lines, "\n") + "\n"
}

func (c *connect) start(context.Context) error {
	if err := os.MkdirAll(filepath.Dir(c.logFile()), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(c.workerConfig(), []byte(connectWorkerConfig(brewkit.DefaultBootstrap)), 0o644); err != nil {
		return err
	}
	// Not CommandContext: the worker must outlive this command.
	cmd := exec.Command(javaBin(),
		"-Xms256m", "-Xmx512m", GC, JIT, "-Djava.awt.headless=true",
		"-cp", filepath.Join(c.lib(), "*"),
		"-Dlog4j2.configurationFile="+c.files("log4j2.properties"),
		"-Dkafka.logs.dir="+filepath.Dir(c.logFile()),
		"org.apache.kafka.connect.cli.ConnectDistributed", c.workerConfig())
	cmd.Dir = c.dir()
	return c.detach(cmd)
}

func (c *connect) reset(context.Context) error {
	return removeAll(filepath.Dir(c.logFile()), c.workerConfig(), c.pidFile(), c.dir("maven.log"))
}

// connectReady: the REST API answers and lists Debezium's PostgreSQL connector.
func connectReady(ctx context.Context) error {
	const base = "http://127.0.0.1:18083"
	if err := httpOK(ctx, base+"/"); err != nil {
		return fmt.Errorf("its REST API does not serve yet (%w)", err)
	}
	body, err := httpGet(ctx, base+"/connector-plugins")
	if err != nil {
		return err
	}
	var plugins []struct {
		Class string `json:"class"`
	}
	if err := json.Unmarshal(body, &plugins); err != nil {
		return fmt.Errorf("GET /connector-plugins: %w", err)
	}
	if !slices.ContainsFunc(plugins, func(p struct {
		Class string `json:"class"`
	}) bool {
		return p.Class == PostgresConnector
	}) {
		return fmt.Errorf("the worker does not list %s", PostgresConnector)
	}
	return nil
}

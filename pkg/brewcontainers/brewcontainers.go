// Package brewcontainers starts the course cluster, three Kafka 4.4.0 nodes in
// KRaft combined mode, in containers with testcontainers-go: the way a Go
// service usually tests against Kafka, with only Docker on the machine.
//
// It uses testcontainers-go's core library and a network of its own, not the
// library's kafka module: that module runs one node and its start script
// assumes confluentinc/confluent-local's layout (/etc/confluent/docker), while
// the course runs three nodes of apache/kafka:4.4.0 (or an image with that
// image's contract, named by BREW_KAFKA_IMAGE). The nodes get the same
// settings as the docker stand (stand/docker-compose.yml; a test holds the two
// together), on free ports of 127.0.0.1 instead of 19092-19094, so they never
// collide with a stand that is up; all but lecture 12's secured listeners and
// their authorizer, which need the key stores `make up` writes (the smoke
// tests run here log in nowhere).
package brewcontainers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	mobynet "github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

// ClusterID is the course cluster's id (DESIGN.md).
const ClusterID = "5nnS6DRtQnKwoMjkkVxxug"

// Label marks every container and network this package starts, so that a
// run that could not clean up (a SIGKILL) can be cleaned up by `brewcontainers clean`.
const Label = "org.brew.containers"

// Image returns the image the nodes run: BREW_KAFKA_IMAGE, or apache/kafka:4.4.0.
func Image() string {
	if img := os.Getenv("BREW_KAFKA_IMAGE"); img != "" {
		return img
	}
	return "apache/kafka:4.4.0"
}

// Settings are the environment every node gets, as in the compose file's
// x-kafka-env (the image turns each KAFKA_* variable into a property).
var Settings = map[string]string{
	"CLUSTER_ID":                                             ClusterID,
	"KAFKA_PROCESS_ROLES":                                    "broker,controller",
	"KAFKA_CONTROLLER_QUORUM_VOTERS":                         "1@kafka-1:9093,2@kafka-2:9093,3@kafka-3:9093",
	"KAFKA_LISTENERS":                                        "INTERNAL://:9092,CONTROLLER://:9093,EXTERNAL://:9094",
	"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP":                   "INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT,EXTERNAL:PLAINTEXT",
	"KAFKA_INTER_BROKER_LISTENER_NAME":                       "INTERNAL",
	"KAFKA_CONTROLLER_LISTENER_NAMES":                        "CONTROLLER",
	"KAFKA_LOG_DIRS":                                         "/var/lib/kafka/data",
	"KAFKA_NUM_PARTITIONS":                                   "3",
	"KAFKA_DEFAULT_REPLICATION_FACTOR":                       "3",
	"KAFKA_MIN_INSYNC_REPLICAS":                              "2",
	"KAFKA_AUTO_CREATE_TOPICS_ENABLE":                        "false",
	"KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS":                 "0",
	"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR":                 "3",
	"KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS":                     "3",
	"KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR":         "3",
	"KAFKA_TRANSACTION_STATE_LOG_MIN_ISR":                    "2",
	"KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS":             "3",
	"KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR": "3",
	"KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR":            "2",
	"KAFKA_SHARE_COORDINATOR_STATE_TOPIC_NUM_PARTITIONS":     "3",
	"KAFKA_LOG_RETENTION_CHECK_INTERVAL_MS":                  "5000",
	"KAFKA_LOG_CLEANER_BACKOFF_MS":                           "1000",
	"KAFKA_REPLICA_LAG_TIME_MAX_MS":                          "10000",
	"KAFKA_GROUP_CONSUMER_MIN_SESSION_TIMEOUT_MS":            "6000",
	"KAFKA_GROUP_CONSUMER_SESSION_TIMEOUT_MS":                "6000",
	"KAFKA_GROUP_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS":         "1000",
	"KAFKA_GROUP_CONSUMER_HEARTBEAT_INTERVAL_MS":             "1000",
	"KAFKA_HEAP_OPTS":                                        "-Xms256m -Xmx512m",
	// The client compiler only and the serial collector, as the stands'
	// nodes (stand.JIT and stand.GC say why).
	"KAFKA_JVM_PERFORMANCE_OPTS": "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true",
}

// Cluster is three running Kafka containers on a network of their own.
type Cluster struct {
	Nodes   []testcontainers.Container
	Ports   []int // each node's client port on 127.0.0.1
	network *testcontainers.DockerNetwork
}

var loopback = netip.MustParseAddr("127.0.0.1")

// StartTimeout bounds how long Start waits for the three nodes.
const StartTimeout = 3 * time.Minute

// Start starts the three nodes and waits until each has started its broker
// (which needs a Raft quorum, so all three start at once). On an error it
// removes what it started.
func Start(ctx context.Context) (*Cluster, error) {
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	labels := map[string]string{Label: "1"}
	nw, err := network.New(ctx, network.WithLabels(labels))
	if err != nil {
		return nil, fmt.Errorf("creating a Docker network (is a Docker engine running?): %w", err)
	}
	c := &Cluster{network: nw, Nodes: make([]testcontainers.Container, 3)}
	if c.Ports, err = freePorts(3); err != nil {
		c.Terminate(context.Background())
		return nil, err
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range 3 {
		wg.Go(func() { c.Nodes[i], errs[i] = startNode(ctx, nw, i+1, c.Ports[i], labels) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.Terminate(context.Background())
		return nil, fmt.Errorf("starting the Kafka containers from %s: %w", Image(), err)
	}
	return c, nil
}

func startNode(ctx context.Context, nw *testcontainers.DockerNetwork, id, port int, labels map[string]string) (testcontainers.Container, error) {
	name := fmt.Sprintf("kafka-%d", id)
	env := map[string]string{
		"KAFKA_NODE_ID":              strconv.Itoa(id),
		"KAFKA_ADVERTISED_LISTENERS": fmt.Sprintf("INTERNAL://%s:9092,EXTERNAL://127.0.0.1:%d", name, port),
	}
	for k, v := range Settings {
		env[k] = v
	}
	ctr, err := testcontainers.Run(ctx, Image(),
		testcontainers.WithEnv(env),
		testcontainers.WithLabels(labels),
		network.WithNetwork([]string{name}, nw),
		// The EXTERNAL listener must be advertised with the port clients
		// reach it on, so the port is chosen first and bound, not left to Docker.
		testcontainers.WithExposedPorts("9094/tcp"),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.PortBindings = mobynet.PortMap{mobynet.MustParsePort("9094/tcp"): {{HostIP: loopback, HostPort: strconv.Itoa(port)}}}
		}),
		// The log strategy has a 60 s bound of its own, which the deadline
		// does not lift: in CI, beside the real tier's tests, the nodes
		// took longer and the start failed at 61 s.
		testcontainers.WithWaitStrategyAndDeadline(StartTimeout, wait.ForLog("Kafka Server started").WithStartupTimeout(StartTimeout)),
	)
	if err != nil {
		if ctr != nil {
			// What the node said last is the clue to why it did not start.
			err = fmt.Errorf("%w\n%s", err, logTail(ctr, 15))
			_ = ctr.Terminate(context.Background())
		}
		return nil, fmt.Errorf("node %d: %w", id, err)
	}
	return ctr, nil
}

// logTail returns the last n lines of a container's log, indented, or why it
// could not read them.
func logTail(ctr testcontainers.Container, n int) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := ctr.Logs(ctx)
	if err != nil {
		return "  (its log could not be read: " + err.Error() + ")"
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  its last log lines:\n    " + strings.Join(lines, "\n    ")
}

// Bootstrap is the three nodes' client addresses, for KAFKA_BOOTSTRAP.
func (c *Cluster) Bootstrap() string {
	var addrs []string
	for _, p := range c.Ports {
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", p))
	}
	return strings.Join(addrs, ",")
}

// Terminate removes the containers (with their volumes) and the network.
func (c *Cluster) Terminate(ctx context.Context) error {
	var errs []error
	for _, n := range c.Nodes {
		if n != nil {
			errs = append(errs, n.Terminate(ctx, testcontainers.RemoveVolumes()))
		}
	}
	if c.network != nil {
		errs = append(errs, c.network.Remove(ctx))
	}
	return errors.Join(errs...)
}

// freePorts asks the kernel for n free ports on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

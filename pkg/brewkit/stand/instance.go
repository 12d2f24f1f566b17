package stand

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// An instance is another copy of the course cluster in the same checkout,
// on a block of ports of its own and with its own state (flavor, pids, data,
// lock) under .stand/i<N>/. The student's stand is instance 0: the contract
// ports (19092-19094 and the rest) and .stand/ itself. The test tiers start
// other instances (BREW_STAND_INSTANCE=N) so that tests which stop nodes run
// side by side, each on a cluster of its own. A student never meets one:
// nothing starts an instance unless the variable is set.
//
// An instance runs the native or the docker stand, with no services beside it
// (PostgreSQL, Connect, Prometheus stay on instance 0's fixed ports), and
// programs that use a fixed port of their own (lecture 15's node 4
// controller, lecture 13's exporters, lecture 10's partner) run on instance 0.

// EnvInstance selects the instance stand control works on in this process.
const EnvInstance = "BREW_STAND_INSTANCE"

// MaxInstance is the highest instance number.
const MaxInstance = 9

// instanceBase is where instance 1's block of ports begins; instance N's
// block is the 100 ports from instanceBase+100*(N-1). All blocks lie below
// Linux's ephemeral range (32768-60999), so the kernel never hands one of
// their ports to a client connection, and apart from every contract port.
const instanceBase = 22100

// contractOffset maps each port of the contract (see DESIGN.md) to its place
// in an instance's block.
var contractOffset = map[int]int{
	19092: 12, 19093: 13, 19094: 14, 19095: 15, 19096: 16, // client listeners, the embedded control port, node 4
	29092: 22, 29093: 23, 29094: 24, 29096: 26, // INTERNAL (replication)
	39092: 32, 39093: 33, 39094: 34, 39096: 36, // CONTROLLER (Raft)
	19192: 42, 19193: 43, 19194: 44, // SECURE (SASL_SSL)
	19292: 52, 19293: 53, 19294: 54, // MTLS
	17071: 61, 17072: 62, 17073: 63, // the nodes' metrics
	19090: 70, 17080: 80, 17081: 81, // Prometheus, lecture 13's exporters
	18080: 90, 18083: 93, 15432: 95, // the partner, Connect, PostgreSQL
}

// Instance returns the instance this process works on: BREW_STAND_INSTANCE,
// 0 (the student's) when unset. A value that is not 0..MaxInstance reads as
// 0 here; Find refuses it with an error that says so.
func Instance() int {
	n, err := parseInstance(os.Getenv(EnvInstance))
	if err != nil {
		return 0
	}
	return n
}

func parseInstance(v string) (int, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(v, "i"))
	if err != nil || n < 0 || n > MaxInstance {
		return 0, fmt.Errorf("%s=%q: want an instance number 0..%d (0 is the student's stand on the contract ports)", EnvInstance, v, MaxInstance)
	}
	return n, nil
}

// InstanceName is the folder of instance n's state under .stand/ ("" for 0).
func InstanceName(n int) string {
	if n == 0 {
		return ""
	}
	return "i" + strconv.Itoa(n)
}

// InstancePort maps a contract port to instance n's port for it; instance 0
// keeps the contract port. It panics on a port the contract does not name:
// a new fixed port must be added to the table before an instance can use it.
func InstancePort(n, contract int) int {
	if n == 0 {
		return contract
	}
	off, ok := contractOffset[contract]
	if !ok {
		panic(fmt.Sprintf("stand: port %d is not a contract port an instance maps", contract))
	}
	return instanceBase + 100*(n-1) + off
}

// Port is InstancePort for this process's instance.
func Port(contract int) int { return InstancePort(Instance(), contract) }

// Bootstrap is instance n's client listeners, as KAFKA_BOOTSTRAP takes them.
func Bootstrap(n int) string {
	var addrs []string
	for _, node := range Nodes {
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", InstancePort(n, 19091+node)))
	}
	return strings.Join(addrs, ",")
}

// ContractPorts rewrites instance n's ports in s back to the contract's, so
// that output printed on an instance compares with a README value for value.
// Longer port numbers are never cut: only whole numbers of five digits change.
func ContractPorts(n int, s string) string {
	if n == 0 {
		return s
	}
	back := map[string]string{}
	for c := range contractOffset {
		back[strconv.Itoa(InstancePort(n, c))] = strconv.Itoa(c)
	}
	return fiveDigits.ReplaceAllStringFunc(s, func(p string) string {
		if c, ok := back[p]; ok {
			return c
		}
		return p
	})
}

var fiveDigits = regexp.MustCompile(`\b\d{5}\b`)

// instancePorts rewrites every 127.0.0.1:PORT of a contract file (a node's
// properties, the compose file) that names a contract port to instance n's
// port; other ports (the compose file's optional web UI) stay.
func instancePorts(n int, s string) string {
	return loopbackPort.ReplaceAllStringFunc(s, func(m string) string {
		p, _ := strconv.Atoi(strings.TrimPrefix(m, "127.0.0.1:"))
		if _, ok := contractOffset[p]; !ok {
			return m
		}
		return "127.0.0.1:" + strconv.Itoa(InstancePort(n, p))
	})
}

var loopbackPort = regexp.MustCompile(`127\.0\.0\.1:\d+`)

// errInstanceNoServices is what a service verb says on an instance.
var errInstanceNoServices = errors.New("an instance of the stand runs no services (PostgreSQL, Connect, Prometheus): they run beside instance 0, the student's stand; unset " + EnvInstance)

// Instances lists the instances other than 0 that have a flavor up in this
// checkout, as stand controls for each.
func (s *Stand) Instances() []*Stand {
	entries, _ := os.ReadDir(filepath.Join(s.Root, ".stand"))
	var out []*Stand
	for _, e := range entries {
		n, err := parseInstance(e.Name())
		if err != nil || n == 0 || !strings.HasPrefix(e.Name(), "i") {
			continue
		}
		o := &Stand{Root: s.Root, Out: s.Out, instance: n}
		if o.Current() != "" {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b *Stand) int { return a.instance - b.instance })
	return out
}

// InstanceNumber is the instance this stand control works on.
func (s *Stand) InstanceNumber() int { return s.instance }

// belongs fails when KAFKA_BOOTSTRAP names a port that is not one of this
// instance's client ports: node control must never stop a node of another
// cluster than the one the caller's clients talk to.
func (s *Stand) belongs() error {
	b := strings.TrimSpace(os.Getenv("KAFKA_BOOTSTRAP"))
	if b == "" {
		return nil
	}
	var mine []string
	for _, n := range append(slices.Clone(Nodes), Fourth) {
		mine = append(mine, "127.0.0.1:"+strconv.Itoa(InstancePort(s.instance, contractClientPort(n))))
		mine = append(mine, "localhost:"+strconv.Itoa(InstancePort(s.instance, contractClientPort(n))))
	}
	for _, a := range strings.Split(b, ",") {
		if a = strings.TrimSpace(a); a != "" && !slices.Contains(mine, a) {
			return fmt.Errorf("KAFKA_BOOTSTRAP=%s is not the cluster of stand instance %d (%s): node control refuses to stop, start or pause nodes of a cluster the clients do not talk to; set %s to the instance that owns these ports", b, s.instance, Bootstrap(s.instance), EnvInstance)
		}
	}
	return nil
}

// cluster is the stand's own cluster with no authentication: the contract
// addresses on instance 0, the instance's block on another.
func cluster() brewkit.Config {
	cfg := brewkit.Default()
	cfg.Brokers = strings.Split(Bootstrap(Instance()), ",")
	return cfg
}

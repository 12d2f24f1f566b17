package faults

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/sim"
)

// uses says what a program asks of Kafka, and so which faults it meets.
type uses uint8

const (
	admin  uses = 1 << iota // it connects: metadata, topics, groups, offsets
	writes                  // it produces
	reads                   // it fetches as a consumer
	shares                  // it fetches as a share-group consumer
	stand                   // it stops and starts nodes of the checkout's stand
)

// program is one row of the matrix: a program and a short run of it that
// reaches Kafka the way its make target does.
type program struct {
	dir  string // under the repository root
	args []string
	uses uses
	// offline, for a program that needs no cluster: what it must do with
	// none (it is run once, with no cluster answering).
	offline *outcome
	// answers, by fault name, what the program does instead of failing
	// where its README says it shows what it could read and why the rest
	// is missing.
	answers map[string]outcome
}

// outcome is what a run must end with: its exit status and words its one
// line on stderr must hold (for status 0: its stdout).
type outcome struct {
	code  int
	words []string
}

// The programs: every folder under lectures/*/cmd and stand/cmd has a row
// (TestEveryProgramHasARow).
var programs = []program{
	{dir: "lectures/01-architecture-kraft/cmd/quorum-status", uses: admin, answers: map[string]outcome{
		// Managed clusters often deny DescribeQuorum: it shows the
		// metadata's view and says why the Raft leader is missing.
		"not allowed": {0, []string{"RaftLeader:              unavailable (CLUSTER_AUTHORIZATION_FAILED"}},
	}},

	{dir: "lectures/02-topics-partitions/cmd/inspect", args: []string{"-create"}, uses: admin},
	{dir: "lectures/02-topics-partitions/cmd/keyed-producer", args: []string{"-n", "20"}, uses: admin | writes},
	{dir: "lectures/02-topics-partitions/cmd/partition-of", args: []string{"-partitions", "6", "order-1"}, offline: &outcome{0, []string{"order-1"}}},
	{dir: "lectures/02-topics-partitions/cmd/promo", args: []string{"-duration", "3s"}, uses: admin | writes | reads},
	{dir: "lectures/02-topics-partitions/cmd/grow", uses: admin | writes},

	{dir: "lectures/03-offsets-retention/cmd/load-and-watch", args: []string{"-duration", "4s", "-topic", "brew.orders.v1", "-group", "brew.fm.load"}, uses: admin | writes | reads},
	{dir: "lectures/03-offsets-retention/cmd/replay", args: []string{"-group", "brew.fm.replay", "-topic", "brew.orders.v1", "-to-earliest"}, uses: admin},
	{dir: "lectures/03-offsets-retention/cmd/retention", uses: admin | writes},
	{dir: "lectures/03-offsets-retention/cmd/compaction", uses: admin | writes | reads},
	{dir: "lectures/03-offsets-retention/cmd/out-of-range", uses: admin | writes | reads},

	{dir: "lectures/04-replication-isr/cmd/watch-isr", args: []string{"-once", "-topic", "brew.orders.v1"}, uses: admin},
	{dir: "lectures/04-replication-isr/cmd/failover", uses: stand},
	{dir: "lectures/04-replication-isr/cmd/preferred-leader", args: []string{"-topic", "brew.orders.v1", "-dry-run"}, uses: admin},
	{dir: "lectures/04-replication-isr/cmd/quorum-math", offline: &outcome{0, []string{"3"}}},
	{dir: "lectures/04-replication-isr/cmd/elr", uses: stand},
	{dir: "lectures/04-replication-isr/cmd/timeline", args: []string{"-in", "no-such-drill.json", "-out", "x.png"}, offline: &outcome{1, []string{"no-such-drill.json"}}},

	{dir: "lectures/05-acks-durability/cmd/acks", args: []string{"-records", "50"}, uses: admin | writes},
	{dir: "lectures/05-acks-durability/cmd/delivery", args: []string{"-n", "20"}, uses: admin | writes},
	{dir: "lectures/05-acks-durability/cmd/idempotence", uses: stand},
	{dir: "lectures/05-acks-durability/cmd/lost-ack", uses: stand},
	{dir: "lectures/05-acks-durability/cmd/errors", uses: stand},

	{dir: "lectures/06-consumer-groups/cmd/commit-styles", args: []string{"-records", "50"}, uses: admin | writes | reads},
	{dir: "lectures/06-consumer-groups/cmd/demo-rebalance", uses: admin | writes | reads},
	{dir: "lectures/06-consumer-groups/cmd/describe", args: []string{"-group", "brew.fm.describe"}, uses: admin},
	{dir: "lectures/06-consumer-groups/cmd/fanout", args: []string{"-orders", "20"}, uses: admin | writes | reads},
	{dir: "lectures/06-consumer-groups/cmd/member", args: []string{"-name", "m1", "-group", "brew.fm.member", "-topic", "brew.orders.v1"}, uses: admin | reads},
	{dir: "lectures/06-consumer-groups/cmd/rebalance-timeline", uses: admin | writes | reads},
	{dir: "lectures/06-consumer-groups/cmd/static-member", uses: admin | writes | reads},

	{dir: "lectures/07-transactions-eos/cmd/crash-drill", args: []string{"-orders", "20", "-crashes", "1"}, uses: admin | writes | reads},
	{dir: "lectures/07-transactions-eos/cmd/kitchen", args: []string{"-idle", "5s"}, uses: admin | writes | reads},
	{dir: "lectures/07-transactions-eos/cmd/read-committed", uses: admin | writes | reads},
	{dir: "lectures/07-transactions-eos/cmd/txn-producer", args: []string{"-id", "brew.fm.txn", "-n", "3"}, uses: admin | writes},
	{dir: "lectures/07-transactions-eos/cmd/verify", uses: admin | reads},
	{dir: "lectures/07-transactions-eos/cmd/zombie", uses: admin | writes | reads},

	{dir: "lectures/08-share-groups/cmd/baristas", args: []string{"-tickets", "20"}, uses: admin | writes | shares},
	{dir: "lectures/08-share-groups/cmd/crash", uses: admin | writes | shares},
	{dir: "lectures/08-share-groups/cmd/describe", uses: admin},
	{dir: "lectures/08-share-groups/cmd/poison", uses: admin | writes | shares},
	{dir: "lectures/08-share-groups/cmd/chart", args: []string{"-dir", "."}, offline: &outcome{1, []string{"throughput.csv"}}},
	{dir: "lectures/08-share-groups/cmd/group-configs", uses: admin, answers: map[string]outcome{
		// kfake checks no ACL on a GROUP resource's configs and answers
		// its defaults; real Kafka refuses (GROUP_AUTHORIZATION_FAILED),
		// and the program reports any resource's error.
		"not allowed": {0, []string{"share.isolation.level"}},
	}},
	{dir: "lectures/08-share-groups/cmd/isolation", uses: admin | writes | shares},

	{dir: "lectures/09-clients-throughput/cmd/bench", args: []string{"-records", "2000"}, uses: admin | writes | reads},
	{dir: "lectures/09-clients-throughput/cmd/chart", args: []string{"-dir", "."}, offline: &outcome{1, []string{"compare.csv"}}},
	{dir: "lectures/09-clients-throughput/cmd/compare", args: []string{"-records", "2000", "-runs", "1", "-clients", "franz-go", "-out", "."}, uses: admin | writes | reads},
	{dir: "lectures/09-clients-throughput/cmd/defaults", offline: &outcome{0, []string{"LINGER"}}},
	{dir: "lectures/09-clients-throughput/cmd/sweep", args: []string{"-records", "2000"}, uses: admin | writes | reads},

	// Lecture 10's programs each start a partner of their own on a free
	// port (-partner 127.0.0.1:0): the matrix runs them side by side.
	{dir: "lectures/10-processing-failures/cmd/backpressure", args: []string{"-partner", "127.0.0.1:0", "-orders", "200", "-pad", "64", "-rate", "1000", "-slow", "1s", "-watch", "2s"}, uses: admin | writes | reads},
	// dlt fetches the dead-letter topic only up to its end offsets: on the
	// matrix's clusters it is empty, and nothing is fetched.
	{dir: "lectures/10-processing-failures/cmd/dlt", uses: admin},
	{dir: "lectures/10-processing-failures/cmd/double-booking", args: []string{"-partner", "127.0.0.1:0", "-orders", "5"}, uses: admin | writes | reads},
	{dir: "lectures/10-processing-failures/cmd/naive", args: []string{"-partner", "127.0.0.1:0", "-orders", "10", "-poison", "5", "-outage", "3s", "-watch", "2s"}, uses: admin | writes | reads},
	{dir: "lectures/10-processing-failures/cmd/partner", args: []string{"-addr", "192.0.2.1:18080"}, offline: &outcome{1, []string{"cannot listen on 192.0.2.1:18080"}}},
	{dir: "lectures/10-processing-failures/cmd/retry-topics", args: []string{"-partner", "127.0.0.1:0", "-orders", "6", "-keys", "0", "-poison", "1", "-delays", "1s,1s", "-outage", "0", "-error-rate", "0", "-limit", "20s"}, uses: admin | writes | reads},
	{dir: "lectures/10-processing-failures/cmd/shutdown", args: []string{"-partner", "127.0.0.1:0", "-orders", "20", "-stop-after", "5"}, uses: admin | writes | reads},
	{dir: "lectures/10-processing-failures/cmd/workers", args: []string{"-partner", "127.0.0.1:0", "-events", "20", "-orders", "5"}, uses: admin | writes | reads},

	// Lecture 11 writes and reads one record (drill.Kafka) before it
	// touches PostgreSQL or Connect: a Kafka fault is Kafka's, with or
	// without PostgreSQL up.
	{dir: "lectures/11-outbox-cdc/cmd/dual-write", args: []string{"-orders", "5", "-kills", "1"}, uses: admin | writes | reads},
	{dir: "lectures/11-outbox-cdc/cmd/outbox", args: []string{"-orders", "10", "-writer-kills", "0", "-relay-kills", "0"}, uses: admin | writes | reads},
	{dir: "lectures/11-outbox-cdc/cmd/inbox", args: []string{"-orders", "10", "-relay-kills", "0", "-kills", "0"}, uses: admin | writes | reads},
	{dir: "lectures/11-outbox-cdc/cmd/cdc", args: []string{"-orders", "5", "-kills", "0", "-down", "5"}, uses: admin | writes | reads},
	{dir: "lectures/11-outbox-cdc/cmd/debezium", args: []string{"-orders", "5", "-kill-at", "-1"}, uses: admin | writes | reads},
	{dir: "lectures/11-outbox-cdc/cmd/compare", args: []string{"-producers", "relay", "-backlog", "10", "-steady", "5"}, uses: admin | writes | reads},

	// Lecture 12 reaches the cluster twice: as the operator on the
	// plaintext listeners (the matrix's faults), then as its users on the
	// secured listeners, which only a real stand has: on the matrix's
	// clusters, which answer, it stops at secure.Find with that one line.
	{dir: "lectures/12-security/cmd/users", uses: admin},
	{dir: "lectures/12-security/cmd/tlsprobe", uses: admin},
	{dir: "lectures/12-security/cmd/acls", uses: admin},
	{dir: "lectures/12-security/cmd/quotas", uses: admin},

	// Lecture 13's instrumented serves no /metrics here (-listen ""): the
	// matrix runs programs side by side, and one port cannot serve them all.
	{dir: "lectures/13-observability/cmd/lag", args: []string{"-group", "brew.fm.lag"}, uses: admin},
	{dir: "lectures/13-observability/cmd/instrumented", args: []string{"-for", "2s", "-listen", "", "-group", "brew.fm.instrumented"}, uses: admin | writes | reads},
	// rules needs promtool, not a cluster: the offline run fails on a file
	// that is not a rule file, with or without promtool.
	{dir: "lectures/13-observability/cmd/rules", args: []string{"-rules", "/etc/passwd"}, offline: &outcome{1, []string{"/etc/passwd is not a Prometheus rule file"}}},
	{dir: "lectures/13-observability/cmd/fire-drill", uses: stand},
	{dir: "lectures/13-observability/cmd/lag-chart", args: []string{"-in", "no-such-drill.json", "-out", "x.png"}, offline: &outcome{1, []string{"no-such-drill.json"}}},

	{dir: "lectures/14-stream-processing/cmd/windows", args: []string{"-orders", "60", "-dir", os.TempDir() + "/brew-fm-windows"}, uses: admin | writes | reads},
	{dir: "lectures/14-stream-processing/cmd/state", args: []string{"-orders", "60", "-dir", os.TempDir() + "/brew-fm-state"}, uses: admin | writes | reads},
	{dir: "lectures/14-stream-processing/cmd/repartition", args: []string{"-orders", "60"}, uses: admin | writes | reads},
	{dir: "lectures/14-stream-processing/cmd/exactly-once", args: []string{"-orders", "60", "-crashes", "1", "-dir", os.TempDir() + "/brew-fm-eos"}, uses: admin | writes | reads},
	{dir: "lectures/14-stream-processing/cmd/scale", args: []string{"-orders", "600", "-dir", os.TempDir() + "/brew-fm-scale"}, uses: admin | writes | reads},
	{dir: "lectures/14-stream-processing/cmd/till", args: []string{"-topic", "brew.fm.stream-orders", "-orders", "60"}, uses: admin | writes},
	{dir: "lectures/14-stream-processing/cmd/analytics", args: []string{"-in", "brew.orders.v1", "-changelog", "brew.fm.stream-changelog", "-out", "brew.fm.stream-revenue", "-group", "brew.fm.stream", "-dir", "", "-idle", "2s"}, uses: admin | writes | reads},
	{dir: "lectures/14-stream-processing/cmd/recount", args: []string{"-in", "brew.orders.v1", "-changelog", "brew.fm.stream-changelog"}, uses: admin | reads},

	{dir: "lectures/15-operations/cmd/features", uses: admin, answers: map[string]outcome{
		// ApiVersions, which carries the features, needs no permission:
		// only the validate-only downgrade would be refused, and it is
		// one line of the report.
		"not allowed": {0, []string{"features, as each node answers ApiVersions"}},
	}},
	{dir: "lectures/15-operations/cmd/quorum", uses: admin},
	{dir: "lectures/15-operations/cmd/partition-count", args: []string{"-duration", "1s", "-max-records", "2000"}, uses: admin | writes | reads},
	// A lab cluster of its own on the jars Maven fetches: no checkout, no jars.
	{dir: "lectures/15-operations/cmd/rolling-upgrade", offline: &outcome{1, []string{"jars are not in", "there is no"}}},
	{dir: "lectures/15-operations/cmd/scale-out", uses: stand},
	{dir: "lectures/15-operations/cmd/restore", uses: stand},

	{dir: "stand/cmd/brewstand", args: []string{"stop-node", "2"}, uses: stand},
	{dir: "stand/cmd/dashboard", args: []string{"-once"}, uses: admin},
	{dir: "stand/cmd/tour", args: []string{"."}, offline: &outcome{2, []string{"lecture folder"}}},
	{dir: "stand/cmd/exercises", args: []string{"list", "-lecture", "99"}, offline: &outcome{1, []string{"no graded exercises"}}},
}

// fault is one column: a cluster that misbehaves one way, and the words the
// one line of every program it applies to must hold.
type fault struct {
	name    string
	applies uses // a program meets it when it uses one of these
	words   []string
	bound   time.Duration // how soon the program must have said so
	setup   func(t *testing.T) []string
}

// Timeout is KAFKA_TIMEOUT for every run: how long a program waits for a
// broker that does not answer.
const timeout = 3 * time.Second

var faults = []fault{
	// A program's connection check answers within brewkit.DialTimeout
	// (the contract: one clear line within 10 s, never a hang).
	{
		name: "no cluster", applies: admin | writes | reads | shares,
		words: []string{"no Kafka answers at 127.0.0.1:1", "make up"}, bound: 3 * time.Second,
		setup: func(*testing.T) []string { return []string{brewkit.EnvBootstrap + "=127.0.0.1:1"} },
	},
	{
		name: "login wanted", applies: admin | writes | reads | shares,
		words: []string{"wants a SASL login", brewkit.EnvSASL}, bound: brewkit.DialTimeout,
		setup: func(t *testing.T) []string {
			env := cluster(t, sim.Options{Login: adminLogin})
			return []string{brewkit.EnvBootstrap + "=" + env.Config.Bootstrap()}
		},
	},
	{
		name: "login refused", applies: admin | writes | reads | shares,
		words: []string{"refused the SASL login", brewkit.EnvPassword}, bound: brewkit.DialTimeout,
		setup: func(t *testing.T) []string {
			env := cluster(t, sim.Options{Login: adminLogin})
			return login(env.Config, "admin", "wrong")
		},
	},
	{
		name: "not allowed", applies: admin | writes | reads | shares,
		words: []string{"AUTHORIZATION_FAILED"}, bound: brewkit.DialTimeout,
		setup: func(t *testing.T) []string {
			env := cluster(t, sim.Options{
				Login:  adminLogin,
				Denied: &sim.Login{User: "student", Pass: "student", Mechanism: "PLAIN"},
			})
			return login(env.Config, "student", "student")
		},
	},
	{
		name: "TLS wanted", applies: admin | writes | reads | shares,
		words: []string{"speaks TLS", brewkit.EnvTLS + "=1"}, bound: brewkit.DialTimeout,
		setup: func(t *testing.T) []string {
			env := cluster(t, sim.Options{TLS: serverTLS(t)})
			return []string{brewkit.EnvBootstrap + "=" + env.Config.Bootstrap(), brewkit.EnvTLS + "=0"}
		},
	},
	{
		name: "TLS not there", applies: admin | writes | reads | shares,
		words: []string{"TLS handshake", brewkit.EnvTLS}, bound: brewkit.DialTimeout,
		setup: func(t *testing.T) []string {
			env := cluster(t, sim.Options{})
			return []string{brewkit.EnvBootstrap + "=" + env.Config.Bootstrap(), brewkit.EnvTLS + "=1"}
		},
	},
	{
		name: "writes refused", applies: writes,
		words: []string{"TOPIC_AUTHORIZATION_FAILED"}, bound: 10 * time.Second,
		setup: func(t *testing.T) []string {
			env := cluster(t, sim.Options{})
			env.Sim.FailProduces(kerr.TopicAuthorizationFailed)
			return []string{brewkit.EnvBootstrap + "=" + env.Config.Bootstrap()}
		},
	},
	{
		name: "reads refused", applies: reads | shares,
		words: []string{"TOPIC_AUTHORIZATION_FAILED"}, bound: 10 * time.Second,
		setup: func(t *testing.T) []string {
			env := cluster(t, sim.Options{})
			env.Sim.FailFetches(kerr.TopicAuthorizationFailed)
			return []string{brewkit.EnvBootstrap + "=" + env.Config.Bootstrap()}
		},
	},
	{
		name: "writes unanswered", applies: writes,
		words: []string{timeout.String()}, bound: 6 * timeout,
		setup: func(t *testing.T) []string {
			env := cluster(t, sim.Options{})
			env.Sim.Hang(kmsg.Produce)
			return []string{brewkit.EnvBootstrap + "=" + env.Config.Bootstrap()}
		},
	},
	{
		name: "reads unanswered", applies: reads | shares,
		words: []string{timeout.String()}, bound: 6 * timeout,
		setup: func(t *testing.T) []string {
			env := cluster(t, sim.Options{})
			env.Sim.Hang(kmsg.Fetch)
			env.Sim.Hang(kmsg.ShareFetch)
			return []string{brewkit.EnvBootstrap + "=" + env.Config.Bootstrap()}
		},
	},
}

// TestEveryProgramMeetsEveryFault runs the matrix: each program against each
// fault it meets, many at once (most of a run is waiting).
func TestEveryProgramMeetsEveryFault(t *testing.T) {
	if brewtest.RaceBuild {
		// The detector would watch only this process's simulated
		// clusters, ten times slower, against bounds of seconds; the
		// programs under test are built without it. make test and make
		// test-real run the matrix.
		t.Skip("the fault matrix runs in make test and make test-real, not under -race")
	}
	root := repoRoot(t)
	noStand := t.TempDir() // BREW_ROOT: a checkout with no stand up
	bins := build(t, root)
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			env := f.setup(t)
			for _, p := range programs {
				if p.uses&f.applies == 0 || p.uses&stand != 0 {
					continue
				}
				t.Run(filepath.Base(p.dir), func(t *testing.T) {
					t.Parallel() // up to cells at once (TestMain)
					r := runWithin(t, bins[p.dir], append(env, "BREW_ROOT="+noStand), f.bound, p.args...)
					want, ok := p.answers[f.name]
					if !ok {
						want = outcome{1, f.words}
					}
					r.check(t, filepath.Base(p.dir), want, f.bound)
				})
			}
		})
	}
	t.Run("no stand", func(t *testing.T) {
		t.Parallel()
		for _, p := range programs {
			if p.uses&stand == 0 {
				continue
			}
			t.Run(filepath.Base(p.dir), func(t *testing.T) {
				t.Parallel()
				r := runWithin(t, bins[p.dir], []string{"BREW_ROOT=" + noStand, brewkit.EnvBootstrap + "=127.0.0.1:1"}, 3*time.Second, p.args...)
				r.check(t, filepath.Base(p.dir), outcome{1, []string{"make up"}}, 3*time.Second)
			})
		}
	})
	t.Run("offline", func(t *testing.T) {
		t.Parallel()
		for _, p := range programs {
			if p.offline == nil {
				continue
			}
			t.Run(filepath.Base(p.dir), func(t *testing.T) {
				t.Parallel()
				r := runWithin(t, bins[p.dir], []string{"BREW_ROOT=" + noStand, brewkit.EnvBootstrap + "=127.0.0.1:1"}, 3*time.Second, p.args...)
				r.check(t, filepath.Base(p.dir), *p.offline, 3*time.Second)
			})
		}
	})
}

// TestEveryProgramHasARow fails for a program the matrix does not run.
func TestEveryProgramHasARow(t *testing.T) {
	root := repoRoot(t)
	dirs, err := filepath.Glob(filepath.Join(root, "lectures", "*", "cmd", "*"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(root, "stand", "cmd", "*"))
	for _, d := range append(dirs, more...) {
		rel, _ := filepath.Rel(root, d)
		if !slices.ContainsFunc(programs, func(p program) bool { return p.dir == rel }) {
			t.Errorf("%s has no row in the fault matrix (programs in matrix_test.go)", rel)
		}
	}
	for _, p := range programs {
		if p.uses == 0 && p.offline == nil {
			t.Errorf("%s: a row says what the program uses, or what it does offline", p.dir)
		}
	}
}

// ran is one run of a program.
type ran struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

func run(t *testing.T, bin string, env []string, limit time.Duration, args ...string) ran {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	// Its own process group, killed whole: some programs run others.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	defer func() {
		if cmd.Process != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) //nolint:errcheck // none left is the usual case
		}
	}()
	cmd.Dir = t.TempDir()
	cmd.Env = append(cleanEnv(), append([]string{brewkit.EnvTimeout + "=" + timeout.String()}, env...)...) // env may set another
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	start := time.Now()
	err := cmd.Run()
	r := ran{stdout: o.String(), stderr: e.String(), took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("still running after %s, killed\nstderr:\n%s\nstdout (end):\n%s", limit, r.stderr, tail(r.stdout))
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r
}

// runWithin runs a program that should end within bound. A run over it is
// measured again, up to three runs in all, when the machine was starved
// while it ran, so that a program that waits too long fails every run and
// one that the machine kept waiting is measured fairly. The tiers run beside
// each other, and in one CI run here every "no cluster" cell took 3 to 13 s
// where another run's took under 0.4 s; in a make test here the offline
// cells took 8 to 11 s in a burst that was over a moment later.
//
// Starved is judged by Linux's pressure stall information: tasks on this
// machine waited for a CPU or for I/O during the run for at least as long
// as the run went over its bound. A program that sleeps or waits on the
// network on an idle machine adds no stall and is judged on its first run.
// Where the kernel does not say (not Linux), the same program's help (-h:
// it reads no flag and dials nothing) taking over a third of the bound
// says the machine is starved. A run is killed a minute past its bound, so
// that one the machine held up is measured again rather than killed (the
// "no cluster" cells took up to 13 s against 3 s).
func runWithin(t *testing.T, bin string, env []string, bound time.Duration, args ...string) ran {
	t.Helper()
	var r ran
	for try := 1; ; try++ {
		before, psi := stalled()
		r = run(t, bin, env, bound+time.Minute, args...)
		if r.took <= bound || try == 3 {
			return r
		}
		var why string
		if psi {
			after, _ := stalled()
			if waited := after - before; waited >= r.took-bound {
				why = fmt.Sprintf("tasks here waited %s for a CPU or I/O meanwhile", waited.Round(10*time.Millisecond))
			}
		} else if help := run(t, bin, []string{brewkit.EnvBootstrap + "=127.0.0.1:1"}, 10*time.Second, "-h"); help.took > bound/3 {
			why = fmt.Sprintf("its help took %s", help.took.Round(10*time.Millisecond))
		}
		if why == "" {
			return r
		}
		t.Logf("took %s, over %s, and %s: the machine is starved, measuring again", r.took.Round(10*time.Millisecond), bound, why)
	}
}

// stalled is how long, in all since boot, tasks on this machine waited for
// a CPU or for I/O while another could run ("some" in /proc/pressure/cpu
// and /proc/pressure/io); false where the kernel does not tell.
func stalled() (time.Duration, bool) {
	var sum time.Duration
	for _, f := range []string{"/proc/pressure/cpu", "/proc/pressure/io"} {
		b, err := os.ReadFile(f)
		if err != nil {
			return 0, false
		}
		some, _, _ := strings.Cut(string(b), "\n")
		_, total, ok := strings.Cut(some, "total=")
		if !ok || !strings.HasPrefix(some, "some ") {
			return 0, false
		}
		us, err := strconv.ParseInt(strings.TrimSpace(total), 10, 64)
		if err != nil {
			return 0, false
		}
		sum += time.Duration(us) * time.Microsecond
	}
	return sum, true
}

// check fails the test unless the run ended as want says within bound: for
// a failure, with exactly one line on stderr, "name: ...", holding want's words.
func (r ran) check(t *testing.T, name string, want outcome, bound time.Duration) {
	t.Helper()
	var problems []string
	if r.code != want.code {
		problems = append(problems, fmt.Sprintf("exit status %d, want %d", r.code, want.code))
	}
	text := r.stdout
	if want.code != 0 {
		text = r.stderr
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], name+": ") {
			problems = append(problems, fmt.Sprintf("stderr has %d lines, want one starting %q", len(lines), name+": "))
		}
	}
	for _, w := range want.words {
		if !strings.Contains(text, w) {
			problems = append(problems, fmt.Sprintf("no %q in what it said", w))
		}
	}
	if r.took > bound {
		problems = append(problems, fmt.Sprintf("took %s, over %s", r.took.Round(10*time.Millisecond), bound))
	}
	if len(problems) > 0 {
		t.Errorf("%s\nstderr:\n%s\nstdout (end):\n%s", strings.Join(problems, "; "), r.stderr, tail(r.stdout))
	}
	t.Logf("exit %d after %s", r.code, r.took.Round(10*time.Millisecond))
}

func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-8):], "\n")
}

// cleanEnv is this process's environment without the cluster settings a
// tier sets: each run says its own.
func cleanEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "KAFKA_") || strings.HasPrefix(kv, "BREW_")
	})
}

// cluster is a simulated cluster for one fault, with the course topics and
// some orders in them, as on a stand where the earlier lectures ran.
func cluster(t *testing.T, opts sim.Options) *brewtest.Env {
	t.Helper()
	env := brewtest.SimWith(t, opts)
	seed := env.Config
	seed.TLS = false // the seeding client cannot check the test's certificate
	if opts.TLS != nil {
		return env // programs never get this far; nothing to seed
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, adm, err := brewkit.Connect(ctx, seed)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.Catalog...); err != nil {
		t.Fatal(err)
	}
	rng := mrand.New(mrand.NewPCG(1, 2))
	var recs []*kgo.Record
	for n := range 60 {
		o := brewkit.NewOrder(rng, int64(n+1), time.Now())
		recs = append(recs, o.Record(brewkit.Orders.Name))
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return env
}

// adminLogin is the login of the matrix's clusters that want one: PLAIN, since
// SCRAM's key derivation, for dozens of logins at once, would be what the
// cells wait for.
var adminLogin = &sim.Login{User: "admin", Pass: "secret", Mechanism: "PLAIN"}

// login is the environment of a client that logs in to cfg's cluster as user.
func login(cfg brewkit.Config, user, pass string) []string {
	return []string{
		brewkit.EnvBootstrap + "=" + cfg.Bootstrap(),
		brewkit.EnvSASL + "=PLAIN", brewkit.EnvUser + "=" + user, brewkit.EnvPassword + "=" + pass,
	}
}

// serverTLS is a TLS configuration with a self-signed certificate for
// 127.0.0.1, which no client here trusts.
func serverTLS(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "brew-course fault matrix"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// The starved judgement reads the kernel's stall totals where it has them.
func TestStalledReadsPressure(t *testing.T) {
	if _, err := os.Stat("/proc/pressure/cpu"); err != nil {
		t.Skip("no pressure stall information here (not Linux, or an old kernel): the matrix asks the program's help instead")
	}
	first, ok := stalled()
	if !ok || first <= 0 {
		t.Fatalf("stalled() = %s, %v from /proc/pressure: want a total above 0", first, ok)
	}
	if again, _ := stalled(); again < first {
		t.Fatalf("the stall total went back: %s, then %s", first, again)
	}
}

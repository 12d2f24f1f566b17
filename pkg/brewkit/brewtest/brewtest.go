// Package brewtest gives every lecture's tests a cluster and the checks the
// course's four test tiers share:
//
//   - fast (`make test`): with no KAFKA_BOOTSTRAP, each test gets its own
//     in-process simulated cluster (package sim), and a test of what only
//     real Kafka does skips;
//   - real (`make test-real`): BREW_REQUIRE_REAL=1 and KAFKA_BOOTSTRAP point
//     the tests at the native stand, and a test that needs real Kafka fails
//     instead of skipping when it is not there;
//   - docker (`make test-docker`): the same on the docker stand;
//   - containers (`make test-containers`, or BREW_CLUSTER=containers go
//     test): the course cluster in Docker containers, started with
//     testcontainers-go.
//
// On a stand of this checkout every test holds the stand lock shared, and a
// test that stops, starts or pauses nodes (NodeControl) or changes
// cluster-wide state (Exclusive) holds it alone.
package brewtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/sim"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// envRequireReal makes a missing real Kafka a test failure instead of a skip.
const envRequireReal = "BREW_REQUIRE_REAL"

// RequireRealSet reports whether BREW_REQUIRE_REAL=1.
func RequireRealSet() bool { return os.Getenv(envRequireReal) == "1" }

// Env is the cluster one test talks to.
type Env struct {
	Config    brewkit.Config
	Sim       *sim.Cluster // the in-process simulation; nil on an external cluster
	Simulated bool         // true on the in-process or the embedded simulation
	lock      *stand.Lock  // the stand lock, held shared for the test; nil without a stand
}

// LockWait bounds how long a test waits for the stand lock: another package's
// fault tests may hold it for minutes.
const LockWait = 20 * time.Minute

// Cluster returns the test's cluster: KAFKA_BOOTSTRAP when set (or the course
// stand under BREW_REQUIRE_REAL=1), else a new in-process simulation closed when
// the test ends.
func Cluster(t testing.TB) *Env {
	t.Helper()
	if inContainers() {
		containersBootstrap(t)
	}
	if os.Getenv(brewkit.EnvBootstrap) != "" || RequireRealSet() {
		cfg, err := brewkit.FromEnv()
		if err != nil {
			t.Fatal(err)
		}
		// The lock first: a fault test in another package may hold it with
		// a node stopped, or the whole stand down and up again (the docker
		// tier's down/reset test); the cluster is whole once it is ours.
		var lock *stand.Lock
		if !inContainers() {
			lock = sharedLock(t)
		}
		cl := client(t, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), brewkit.DialTimeout)
		defer cancel()
		if err := brewkit.Ping(ctx, cfg, cl); err != nil {
			t.Fatal(err)
		}
		simulated, err := brewkit.IsSimulated(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return &Env{Config: cfg, Simulated: simulated, lock: lock}
	}
	c, err := sim.New(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &Env{Config: c.Config(), Sim: c, Simulated: true}
}

// sharedLock takes the stand lock shared for the test, when it runs inside the
// course checkout: tests that stop nodes wait until it is free, so no test
// sees a node vanish under it, whatever -p go test runs with and however many
// modules scripts/test runs at once.
func sharedLock(t testing.TB) *stand.Lock {
	t.Helper()
	s, err := stand.Find()
	if err != nil {
		return nil // not in a checkout of the course: nothing to share
	}
	l, err := s.OpenLock()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), LockWait)
	defer cancel()
	if err := l.Shared(ctx); err != nil {
		t.Fatal(err)
	}
	return l
}

// Exclusive takes the stand lock exclusive until the test ends: no other test
// uses the cluster meanwhile. NodeControl does this itself; call it directly before
// changing cluster-wide state (leaders of the Brew topics, broker configs).
func (e *Env) Exclusive(t testing.TB) {
	t.Helper()
	RequireName(t, Alone, "holds the stand alone")
	if e.lock == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), LockWait)
	defer cancel()
	start := time.Now()
	if err := e.lock.Exclusive(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Logf("waited %s for the stand lock", d.Round(time.Second))
	}
}

// RequireReal skips a test of behaviour only real Kafka has (quorum,
// replication, ISR, min ISR, real retention and compaction timing); under
// BREW_REQUIRE_REAL=1 it fails the test instead.
func (e *Env) RequireReal(t testing.TB) {
	t.Helper()
	if !e.Simulated {
		return
	}
	const msg = "needs real Kafka (this is the kfake simulation): run `make test-real`"
	if RequireRealSet() {
		t.Fatal(msg + " [BREW_REQUIRE_REAL=1]")
	}
	t.Skip(msg)
}

// Client returns a kgo client for the test's cluster, closed when the test ends.
func (e *Env) Client(t testing.TB, opts ...kgo.Opt) *kgo.Client { return client(t, e.Config, opts...) }

// Admin returns a kadm client for the test's cluster.
func (e *Env) Admin(t testing.TB) *kadm.Client { return kadm.NewClient(e.Client(t)) }

func client(t testing.TB, cfg brewkit.Config, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := brewkit.NewClient(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// NodeControl returns node control for the test's cluster: the in-process
// simulation's, or the stand's. Nodes it pauses are resumed and nodes it stops
// started again when the test ends, pass or fail, if the test did not do so.
// It takes the stand lock exclusive, which may wait for other tests that
// change the cluster (leaders, the Raft leader): call it before the test
// creates a topic or reads what it will compare.
func (e *Env) NodeControl(t testing.TB) brewkit.NodeControl {
	t.Helper()
	RequireName(t, Alone, "stops, pauses or restarts nodes")
	if e.Sim != nil {
		n := e.Sim.NodeControl()
		t.Cleanup(func() {
			for id := range e.Sim.Paused() {
				_ = n.ResumeNode(context.Background(), int(id))
			}
			for id, up := range e.Sim.Up() {
				if !up {
					_ = n.StartNode(context.Background(), int(id))
				}
			}
		})
		return n
	}
	noStandInContainers(t)
	s := findStand(t)
	e.Exclusive(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stand.ReadyTimeout)
		defer cancel()
		if err := s.Up(ctx, s.Current()); err != nil {
			t.Errorf("restoring the stand after the test: %v", err)
			return
		}
		// The next test expects ISR [1 2 3] again, not only three brokers.
		adm := e.Admin(t)
		var lagging []string
		err := brewkit.WaitFor(ctx, 2*time.Minute, 250*time.Millisecond, func() bool {
			lagging = Partitions(ctx, adm, UnderReplicated)
			return len(lagging) == 0
		})
		if err != nil {
			t.Errorf("restoring the stand after the test: partitions still under-replicated: %v", lagging)
			return
		}
		// And every partition led by its preferred replica again. Left to
		// itself the controller moves them back when its imbalance check
		// comes round (every 5 minutes), in the middle of whichever test
		// runs then: a group coordinator that moves loads its groups anew
		// and gives each member, a killed one too, a new session timeout.
		if err := preferredLeaders(ctx, adm); err != nil {
			t.Errorf("restoring the stand after the test: %v", err)
		}
	})
	return s
}

// preferredLeaders elects the preferred replica of every partition whose
// leader is another, internal topics' too, and waits until the metadata
// shows it.
func preferredLeaders(ctx context.Context, adm *kadm.Client) error {
	var off []string
	err := brewkit.WaitFor(ctx, time.Minute, 250*time.Millisecond, func() bool {
		off = Partitions(ctx, adm, NotPreferred)
		if len(off) == 0 {
			return true
		}
		// Partitions already in place answer ELECTION_NOT_NEEDED: no error.
		_, _ = adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil)
		return false
	})
	if err != nil {
		return fmt.Errorf("partitions still off their preferred leader: %v", off)
	}
	return nil
}

// NotPreferred is a partition led by another replica than its preferred
// (first) one.
func NotPreferred(p kadm.PartitionDetail) bool {
	return len(p.Replicas) > 0 && p.Leader != p.Replicas[0]
}

// UnderReplicated is a partition whose ISR is smaller than its replica set.
func UnderReplicated(p kadm.PartitionDetail) bool { return len(p.ISR) < len(p.Replicas) }

// Partitions lists, as "topic-partition (leader L, replicas R, ISR I)", the
// partitions of every topic, internal ones included, that match: "?" and
// the error when the cluster does not answer.
func Partitions(ctx context.Context, adm *kadm.Client, match func(kadm.PartitionDetail) bool) []string {
	td, err := adm.ListTopicsWithInternal(ctx)
	if err != nil {
		return []string{"? " + err.Error()}
	}
	var out []string
	for _, d := range td.Sorted() {
		for _, p := range d.Partitions.Sorted() {
			if match(p) {
				out = append(out, fmt.Sprintf("%s-%d (leader %d, replicas %v, ISR %v)", d.Topic, p.Partition, p.Leader, p.Replicas, p.ISR))
			}
		}
	}
	return out
}

// Stand returns the stand that is up in this checkout, failing the test when
// none is (node control on a cluster the repository did not start is impossible).
func (e *Env) Stand(t testing.TB) *stand.Stand {
	t.Helper()
	noStandInContainers(t)
	return findStand(t)
}

func findStand(t testing.TB) *stand.Stand {
	t.Helper()
	s, err := stand.Find()
	if err != nil {
		t.Fatal(err)
	}
	if s.Current() == "" {
		t.Fatal("this test stops and starts nodes: it needs a stand started by this repository (`make up`), not only KAFKA_BOOTSTRAP")
	}
	s.Out = testWriter{t}
	return s
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", p)
	return len(p), nil
}

// Eventually polls cond every 100ms until it holds or timeout passes; cond
// returns whether it holds and what it saw, which a failure reports.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		ok, saw := cond()
		if ok {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last seen: %s", what, timeout, saw)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// FreshTopic creates a topic brew.test.<prefix>-<random> with the given
// partitions on three replicas (brewkit.FreshTopic), and deletes it when the
// test ends.
func (e *Env) FreshTopic(t testing.TB, prefix string, partitions int32) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name, drop, err := brewkit.FreshTopic(ctx, e.Admin(t), brewkit.Fresh{Prefix: "brew.test." + prefix + "-", Partitions: partitions})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop(context.Background()) }) //nolint:errcheck // best effort
	return name
}

// Sim returns a new in-process simulated cluster in every tier, for tests of
// how a program handles a fault only the simulation can inject (a fetch that
// fails); never for a claim about Kafka's own behaviour.
func Sim(t testing.TB) *Env {
	t.Helper()
	return SimWith(t, sim.Options{})
}

// SimWith is Sim with options: a login the cluster requires, TLS.
func SimWith(t testing.TB, opts sim.Options) *Env {
	t.Helper()
	c, err := sim.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &Env{Config: c.Config(), Sim: c, Simulated: true}
}

// The words in a test's name that scripts/test selects it by (go test's
// -run and -skip), so that a new lecture's tests need no edit of the script:
// a test that holds the stand alone (NodeControl, Exclusive) has Alone in its
// name, and the tiers run those before the tests that share the stand; a
// test that compares output with a README (MatchesReadme) has Readme in its
// name, and the docker tier runs those in every lecture.
const (
	Alone  = "Alone"
	Readme = "Readme"
)

// RequireName fails a test whose name lacks word: what it does (why) must
// show in its name for scripts/test to select it.
func RequireName(t testing.TB, word, why string) {
	t.Helper()
	root, _, _ := strings.Cut(t.Name(), "/")
	if !strings.Contains(root, word) {
		t.Fatalf("%s %s, so its name must contain %q: scripts/test selects such tests by name (-run %s)", root, why, word, word)
	}
}

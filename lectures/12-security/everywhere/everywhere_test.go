package everywhere_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/12-security/everywhere"
	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// program is one lecture's quickest program that needs nothing but Kafka
// (lecture 11's needs PostgreSQL as well), and a line its output must have.
type program struct {
	lecture, cmd string
	args         []string
	want         string // a regular expression matching a whole line of stdout
	postgres     bool
}

var programs = []program{
	{lecture: "01-architecture-kraft", cmd: "quorum-status", want: `^CurrentVoters: +\[1 2 3\]$`},
	{lecture: "02-topics-partitions", cmd: "inspect", args: []string{"-topic", "brew.orders.v1"}, want: `^brew\.orders\.v1 +partitions=6 +records=\d+$`},
	{lecture: "03-offsets-retention", cmd: "out-of-range", want: `^earliest re-read every record still stored; latest skipped them: 40 records it never processed$`},
	{lecture: "04-replication-isr", cmd: "watch-isr", args: []string{"-once"}, want: `^under-replicated: 0 of 6 +under min ISR \(acks=all fails\): 0 of 6$`},
	{lecture: "05-acks-durability", cmd: "delivery", want: `^ord-0000003 +2048 +\d+ +- +MESSAGE_TOO_LARGE: `},
	{lecture: "06-consumer-groups", cmd: "fanout", want: `^notifications read 600 of 600, analytics 600 of 600: each group sees every order;$`},
	{lecture: "07-transactions-eos", cmd: "txn-producer", args: []string{"-id", "brew.secure.everywhere." + strconv.Itoa(rand.IntN(1e6)), "-n", "3"}, want: `^txn +3 +aborted +OrderPlaced \+ PaymentReceived for ord-\d+ `},
	{lecture: "08-share-groups", cmd: "isolation", want: `read_committed \(GROUP_CONFIG\), 4 tickets delivered$`},
	{lecture: "09-clients-throughput", cmd: "bench", args: []string{"-records", "5000"}, want: `^consume +5000 +\d+`},
	{lecture: "10-processing-failures", cmd: "double-booking", args: []string{"-partner", "127.0.0.1:0"}, want: `^order id +50 +10 +40 +0$`},
	{lecture: "11-outbox-cdc", cmd: "dual-write", args: []string{"-schema", "everywhere_dual_write", "-orders", "20", "-kills", "1"}, want: `^row, then event +20 +19 +1 +0$`, postgres: true},
}

// Every earlier lecture's program runs on the SECURE listeners (SASL_SSL,
// SCRAM-SHA-512 as User:brew, the course CA) with nothing but environment
// variables, and lecture 01's also on MTLS with brew's client certificate:
// each exits 0 and prints its lesson's line.
func TestEveryLectureRunsOnTheSecuredListeners(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := secure.Find(ctx, env.Config)
	require.NoError(t, err)
	// The Brew topics, as the operator: lecture 02's inspect reads one that
	// a fresh stand does not have yet.
	_, err = brewkit.EnsureTopics(ctx, env.Admin(t), brewkit.Catalog...)
	require.NoError(t, err)
	began := time.Now()
	all, cancelAll := context.WithTimeout(context.Background(), 2*time.Minute) // every program, builds included
	defer cancelAll()
	for _, p := range programs {
		t.Run(p.lecture, func(t *testing.T) {
			if p.postgres {
				requirePostgres(t)
			}
			out := runWithin(t, all, p, everywhere.SASL(c))
			require.Regexp(t, regexp.MustCompile(`(?m)`+p.want), out)
		})
	}
	t.Run("mtls", func(t *testing.T) {
		out := runWithin(t, all, programs[0], everywhere.MTLS(c))
		require.Regexp(t, regexp.MustCompile(`(?m)`+programs[0].want), out)
	})
	t.Logf("%d programs in %s", len(programs)+1, time.Since(began).Round(time.Second))
}

// A user with no ACLs gets one line from any program, Kafka's error with
// what to do: TOPIC_AUTHORIZATION_FAILED, and that the cluster's admin grants
// it. Exit 1, as for any failure.
func TestAUserWithoutACLsGetsOneLine(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := secure.Find(ctx, env.Config)
	require.NoError(t, err)
	user, password, drop, err := c.FreshUser(ctx, "everywhere-")
	require.NoError(t, err)
	t.Cleanup(func() { drop(context.Background()) }) //nolint:errcheck // best effort
	vars := everywhere.SASL(c)
	for i, kv := range vars {
		switch {
		case strings.HasPrefix(kv, "KAFKA_USERNAME="):
			vars[i] = "KAFKA_USERNAME=" + user
		case strings.HasPrefix(kv, "KAFKA_PASSWORD="):
			vars[i] = "KAFKA_PASSWORD=" + password
		}
	}
	for _, p := range []program{programs[1], programs[4]} {
		t.Run(p.lecture, func(t *testing.T) {
			stdout, stderr, code := start(t, p, vars)
			require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
			require.Regexp(t, `^`+p.cmd+`: .*TOPIC_AUTHORIZATION_FAILED: .*: the cluster's ACLs do not allow KAFKA_USERNAME=`+user+` this; its admin grants it \(kafka-acls\), or log in as another user\n$`, stderr)
		})
	}
}

// `make everywhere` prints the environment to paste and runs lecture 01's
// quorum-status with it: the brokers it lists are the SECURE listeners'.
func TestMakeEverywhereReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-s", "everywhere")
	cmd.Dir = ".."
	cmd.Env = everywhere.Environ(os.Environ(), nil) // only what make sets
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	t.Log("\n" + stdout.String())
	brewtest.MatchesReadme(t, "../README.md", "everywhere", stdout.String())
}

// runWithin runs p with env within parent and returns its stdout; it must
// exit 0.
func runWithin(t *testing.T, parent context.Context, p program, env []string) string {
	t.Helper()
	stdout, stderr, code := startWithin(t, parent, p, env)
	if code != 0 {
		t.Fatalf("%s with %s: exit %d; stderr:\n%s\nstdout:\n%s", p.cmd, strings.Join(env, " "), code, stderr, stdout)
	}
	return stdout
}

// start builds and runs p with env, within a minute, and returns its
// output and exit code.
func start(t *testing.T, p program, env []string) (stdout, stderr string, code int) {
	return startWithin(t, context.Background(), p, env)
}

// startWithin is start, bounded by parent too.
func startWithin(t *testing.T, parent context.Context, p program, env []string) (stdout, stderr string, code int) {
	t.Helper()
	dir := filepath.Join("..", "..", p.lecture)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("%s is not beside this lecture (copied out on its own?): %v", p.lecture, err)
	}
	bin := brewtest.BuildCmdAt(t, filepath.Join(dir, "cmd", p.cmd))
	ctx, cancel := context.WithTimeout(parent, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, p.args...)
	cmd.Dir = dir
	cmd.Env = everywhere.Environ(os.Environ(), env)
	cmd.WaitDelay = 5 * time.Second
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	began := time.Now()
	err := cmd.Run()
	t.Logf("%s %s: %s, %v", p.cmd, strings.Join(p.args, " "), time.Since(began).Round(100*time.Millisecond), err)
	if ctx.Err() != nil {
		t.Fatalf("%s did not end within a minute (or the test's two): %v; stderr:\n%s\nstdout:\n%s", p.cmd, ctx.Err(), e.String(), o.String())
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return o.String(), e.String(), exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}

// requirePostgres skips the test when the stand's PostgreSQL does not
// answer, and fails it under BREW_REQUIRE_REAL=1, as lecture 11's own tests do.
func requirePostgres(t *testing.T) {
	t.Helper()
	addr := "127.0.0.1:15432"
	if dsn := os.Getenv("BREW_POSTGRES_DSN"); dsn != "" {
		return // lecture 11's program reports its own failure to reach it
	}
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		conn.Close()
		return
	}
	msg := "lecture 11's program needs PostgreSQL on " + addr + " (" + err.Error() + "): `make services-up S=postgres` at the root starts it"
	if brewtest.RequireRealSet() {
		t.Fatal(msg + " [BREW_REQUIRE_REAL=1]")
	}
	t.Skip(msg)
}

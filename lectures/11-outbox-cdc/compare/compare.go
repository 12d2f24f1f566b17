// Package compare runs the lecture's three producers of OrderPlaced events
// one after the other on the same load: the outbox relay (polling with FOR
// UPDATE SKIP LOCKED, package outbox), the Go WAL reader (package cdc) and
// Debezium on Kafka Connect (package debezium). For each it measures the
// events per second of draining a backlog, the end-to-end latency from
// order-service's COMMIT to the consumer at a steady pace, the load on
// PostgreSQL (scans of the outbox table, rows deleted, CPU of the backends
// serving the producer) and the memory of the producer's process.
package compare

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/cdc"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/debezium"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/outbox"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Producer is one way of getting the outbox into Kafka.
type Producer string

// The three.
const (
	Relay    Producer = "relay"
	CDC      Producer = "cdc"
	Debezium Producer = "debezium"
)

// Producers are the three, in the README's order.
var Producers = []Producer{Relay, CDC, Debezium}

// Says is what a producer is, in the README's words.
func (p Producer) Says() string {
	switch p {
	case Relay:
		return "outbox relay: polls every 100ms, batches of 10, FOR UPDATE SKIP LOCKED, DELETE after the ack"
	case CDC:
		return "Go reader of a pgoutput slot, the slot acknowledged after Kafka's ack"
	case Debezium:
		return "Debezium's PostgreSQL connector with the outbox event router, on Kafka Connect"
	}
	return string(p)
}

// ParseProducers reads a comma-separated list of producers.
func ParseProducers(s string) ([]Producer, error) {
	var out []Producer
	for _, name := range strings.Split(s, ",") {
		p := Producer(strings.TrimSpace(name))
		if !slices.Contains(Producers, p) {
			return nil, fmt.Errorf("%q is not one of relay, cdc, debezium", name)
		}
		out = append(out, p)
	}
	return out, nil
}

// The relay as the outbox part runs it.
const (
	RelayBatch = 10
	RelayPoll  = 100 * time.Millisecond
)

// Options set up the comparison.
type Options struct {
	Producers []Producer
	Backlog   int           // orders written before the producer starts: it drains them
	Steady    int           // orders written at Every once it runs
	Every     time.Duration // the steady pace
	Seed      uint64
	Run       string
	// Name is the prefix of each producer's schema, slot, publication,
	// connector and topic: NAME_relay, brew.outbox.NAME-relay, ...
	Name    string
	Command []string // this program: its `relay` and `reader` subcommands
	Connect *debezium.Connect
	Worker  debezium.Worker // where the Connect worker runs (its memory)
	// Progress, when set, gets a line per step.
	Progress func(string)
}

// Defaults are the lecture's comparison.
var Defaults = Options{Producers: Producers, Backlog: 2000, Steady: 300, Every: 5 * time.Millisecond, Seed: 11, Name: "compare"}

// Row is one producer's measurements.
type Row struct {
	Producer   Producer
	Written    int
	Unique     int
	Lost       int
	Duplicates int
	PerSec     float64       // events per second draining the backlog (first to last arrival)
	P50, P99   time.Duration // COMMIT to consumer, at the steady pace
	Scans      int64         // seq_scan + idx_scan of its outbox table
	Deleted    int64         // n_tup_del of its outbox table
	PGCPU      time.Duration // CPU of the PostgreSQL backends serving it
	RSS        int64         // its process's resident memory, bytes (0: unknown)
	Process    string        // what runs: a Go process, the Connect worker (JVM)
}

// Result is the comparison.
type Result struct {
	Backlog, Steady int
	Every           time.Duration
	Rows            []Row
}

// names are one producer's schema, slot and publication, connector and topic.
type names struct{ schema, slot, connector, topic string }

func (o Options) names(p Producer) names {
	return names{schema: o.Name + "_" + string(p), slot: "brew_" + o.Name + "_" + string(p),
		connector: "brew-" + o.Name + "-" + string(p), topic: "brew.outbox." + o.Name + "-" + string(p)}
}

// AppName is the application_name of a producer's connections (PGAPPNAME):
// how its backends are found in pg_stat_activity.
func AppName(o Options, p Producer) string { return "brew-" + o.Name + "-" + string(p) }

// Run measures each producer in turn.
func Run(ctx context.Context, cfg brewkit.Config, o Options) (Result, error) {
	res := Result{Backlog: o.Backlog, Steady: o.Steady, Every: o.Every}
	var topics []brewkit.Topic
	for _, p := range o.Producers {
		topics = append(topics, brewkit.TopicNamed(o.names(p).topic, 6))
	}
	cl, _, err := drill.Kafka(ctx, cfg, topics...)
	if err != nil {
		return res, err
	}
	cl.Close()
	for _, p := range o.Producers {
		row, err := measure(ctx, cfg, o, p)
		if err != nil {
			return res, fmt.Errorf("%s: %w", p, err)
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// setUp drops what an earlier run left and creates the producer's schema
// (and for the WAL readers its publication and slot) on a connection of
// its own named app, closed when done: its backend reports the scans of
// CREATE TABLE as it exits.
func setUp(ctx context.Context, p *pgxpool.Pool, prod Producer, n names, app string) error {
	if err := cdc.Release(ctx, p, n.slot, n.slot); err != nil {
		return err
	}
	cfg, err := pgxpool.ParseConfig(db.DSN())
	if err != nil {
		return err
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	cfg.MaxConns = 1
	setup, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer setup.Close()
	ddl := cdc.DDL
	if prod == Relay {
		ddl = outbox.DDL
	}
	if err := db.ResetSchema(ctx, setup, n.schema, ddl...); err != nil {
		return err
	}
	if prod != Relay {
		return cdc.Capture(ctx, setup, n.schema, n.slot, n.slot)
	}
	return nil
}

// settledStats waits (at most a minute) until the statistics of schema's
// outbox count every order's INSERT (and, for the relay, its DELETE) and
// no backend named app is left: a backend reports its counts when it exits
// (and a busy one may put them off: PostgreSQL 15 reports at most once a
// second, and later when another backend holds the statistics' lock).
func settledStats(ctx context.Context, p *pgxpool.Pool, schema, app string, written int64, deletes bool) (scans, deleted int64, err error) {
	var last error
	var inserted int64
	var left int
	werr := brewkit.WaitFor(ctx, time.Minute, 50*time.Millisecond, func() bool {
		last = p.QueryRow(ctx, `SELECT seq_scan + coalesce(idx_scan, 0), n_tup_del, n_tup_ins,
				(SELECT count(*) FROM pg_stat_activity WHERE application_name = $2)
			FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'outbox'`, schema, app).Scan(&scans, &deleted, &inserted, &left)
		return last == nil && inserted >= written && left == 0 && (!deletes || deleted >= written)
	})
	if last != nil {
		return scans, deleted, last
	}
	if werr != nil {
		return scans, deleted, fmt.Errorf("the statistics of %s.outbox did not settle within a minute: %d of %d INSERTs, %d DELETEs, %d backends named %s left", schema, inserted, written, deleted, left, app)
	}
	return scans, deleted, nil
}

// relayDeleted waits (at most a minute) until the statistics of schema's
// outbox count written DELETEs. The consumer sees a batch's events once
// Kafka has acknowledged them, a moment before the relay deletes its rows:
// a relay stopped in that moment leaves the batch's rows behind (to send
// again, as the relay should), and they are never deleted. The running
// relay reports its counts within a second or so; the table itself is not
// queried, whose scans the comparison counts.
func relayDeleted(ctx context.Context, p *pgxpool.Pool, schema string, written int64) error {
	var deleted int64
	var last error
	werr := brewkit.WaitFor(ctx, time.Minute, 50*time.Millisecond, func() bool {
		last = p.QueryRow(ctx, `SELECT n_tup_del FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'outbox'`, schema).Scan(&deleted)
		return last == nil && deleted >= written
	})
	if last != nil {
		return last
	}
	if werr != nil {
		return fmt.Errorf("the relay deleted %d of the %d outbox rows it sent within a minute", deleted, written)
	}
	return nil
}

// quantile of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q * float64(len(sorted)-1))
	return sorted[i]
}

// start runs a producer as a child process whose PostgreSQL connections are
// named app.
func start(ctx context.Context, cfg brewkit.Config, command []string, app string, args ...string) (*exec.Cmd, error) {
	cmd := brewkit.Command(ctx, cfg, command, args...)
	cmd.Env = append(cmd.Env, "PGAPPNAME="+app)
	cmd.Stderr = nil // its "interrupted" at the SIGTERM that stops it; a failure shows in what it did not deliver
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the %s: %w", args[0], err)
	}
	return cmd, nil
}

// stopper stops cmd with SIGTERM (a clean stop, status 143) once.
func stopper(cmd *exec.Cmd) func() error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var result error
	stopped := false
	return func() error {
		if stopped {
			return result
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			err = <-done
		}
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 143) {
			result = fmt.Errorf("%s: %w", cmd.Args[1], err)
		}
		return result
	}
}

// backendCPU is the CPU time (user + system) of the PostgreSQL backends
// whose application_name is app, and of the walsender streaming slot: the
// work PostgreSQL did for one producer, read from /proc (PostgreSQL runs on
// this machine).
func backendCPU(ctx context.Context, p *pgxpool.Pool, app, slot string) (time.Duration, error) {
	rows, err := p.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1
		UNION SELECT active_pid FROM pg_replication_slots WHERE slot_name = $2 AND active_pid IS NOT NULL`, app, slot)
	if err != nil {
		return 0, err
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, pid := range pids {
		total += cpuOf(int(pid))
	}
	return total, nil
}

// clockTicks is USER_HZ, 100 on Linux.
const clockTicks = 100

// cpuOf is utime + stime of pid (0 when it cannot be read).
func cpuOf(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// After the command: state is field 3; utime and stime are 14 and 15.
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * time.Second / clockTicks
}

// rss is pid's VmRSS in bytes (0 when it cannot be read).
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

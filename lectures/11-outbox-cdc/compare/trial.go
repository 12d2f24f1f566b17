package compare

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
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

// trial is one producer's measurement: the same load, three steps.
type trial struct {
	o     Options
	prod  Producer
	n     names
	run   string        // names the trial's events
	p     *pgxpool.Pool // the course's connection: setup, statistics
	app   *pgxpool.Pool // order-service's
	tail  *cdc.Tail     // a consumer of the producer's topic
	child *exec.Cmd     // the relay or the reader; nil for Debezium
	stop  func() error  // stops the child
	row   Row
}

// measure runs one producer's trial: a backlog drained, then a steady pace,
// then what it cost; and counts what reached Kafka.
func measure(ctx context.Context, cfg brewkit.Config, o Options, prod Producer) (Row, error) {
	t := &trial{o: o, prod: prod, n: o.names(prod), run: o.Run + "/" + string(prod), row: Row{Producer: prod},
		stop: func() error { return nil }}
	p, err := db.Connect(ctx)
	if err != nil {
		return t.row, err
	}
	defer p.Close()
	t.p = p
	base, err := t.setUp(ctx)
	if err != nil {
		return t.row, err
	}
	defer t.cleanUp(context.WithoutCancel(ctx))
	if t.app, err = db.ConnectIn(ctx, t.n.schema); err != nil {
		return t.row, err
	}
	defer t.app.Close()
	if err := t.startTail(ctx, cfg); err != nil {
		return t.row, err
	}
	defer t.tail.Close()

	// 1. A backlog, written while no producer runs; the producer starts and
	// drains it.
	backlog, err := t.write(ctx, 0, o.Backlog, 0)
	if err != nil {
		return t.row, err
	}
	t.say("%d orders waiting; starting the producer", o.Backlog)
	if err := t.startProducer(ctx, cfg); err != nil {
		return t.row, err
	}
	defer t.stop() //nolint:errcheck // stopped on the happy path already
	if err := t.drainRate(ctx); err != nil {
		return t.row, err
	}
	t.say("backlog drained at %.0f events/s; %d orders at one per %s", t.row.PerSec, o.Steady, o.Every)

	// 2. The steady pace: COMMIT to consumer.
	steady, err := t.write(ctx, o.Backlog, o.Backlog+o.Steady, o.Every)
	if err != nil {
		return t.row, err
	}
	if err := t.latency(ctx, steady); err != nil {
		return t.row, err
	}

	// 3. What it cost: the backends serving it, its process.
	if err := t.cost(ctx); err != nil {
		return t.row, err
	}
	if err := t.release(ctx); err != nil {
		return t.row, err
	}
	t.app.Close() // its backend's statistics are flushed when it exits
	written := append(backlog, steady...)
	t.tally(written)
	t.row.Scans, t.row.Deleted, err = settledStats(ctx, p, t.n.schema, AppName(o, prod), int64(len(written)), prod == Relay)
	t.row.Scans -= base
	return t.row, err
}

func (t *trial) say(format string, args ...any) {
	if t.o.Progress != nil {
		t.o.Progress(fmt.Sprintf("%-8s ", t.prod) + fmt.Sprintf(format, args...))
	}
}

// setUp removes what an earlier run left and creates the producer's schema
// (and slot); it returns the outbox table's scans so far.
func (t *trial) setUp(ctx context.Context) (scans int64, err error) {
	if t.prod == Debezium {
		if err := t.o.Connect.Remove(ctx, t.n.connector); err != nil {
			return 0, err
		}
	}
	if err := setUp(ctx, t.p, t.prod, t.n, AppName(t.o, t.prod)+"-setup"); err != nil {
		return 0, err
	}
	// CREATE TABLE scans the new table once for each index it builds.
	scans, _, err = settledStats(ctx, t.p, t.n.schema, AppName(t.o, t.prod)+"-setup", 0, false)
	return scans, err
}

// cleanUp removes the connector and the slot whatever happened (they are
// gone on the happy path already).
func (t *trial) cleanUp(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	if t.prod == Debezium {
		_ = t.o.Connect.Remove(ctx, t.n.connector)
	}
	if t.prod != Relay {
		_ = cdc.Release(ctx, t.p, t.n.slot, t.n.slot)
	}
}

// startTail starts a consumer of the producer's topic from its end.
func (t *trial) startTail(ctx context.Context, cfg brewkit.Config) error {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.TopicNamed(t.n.topic, 6)); err != nil {
		return err
	}
	from, err := drill.Start(ctx, adm, t.n.topic)
	if err != nil {
		return err
	}
	t.tail, err = cdc.StartTail(ctx, cfg, t.n.topic, from, t.run)
	return err
}

// write places orders from..to-1, one per every (0: at once), as
// order-service does for the producer: into the outbox table (the relay's)
// or the orders table the WAL readers capture.
func (t *trial) write(ctx context.Context, from, to int, every time.Duration) ([]cdc.Written, error) {
	var out []cdc.Written
	next := time.Now()
	for i := from; i < to; i++ {
		if every > 0 {
			if err := brewkit.Sleep(ctx, time.Until(next)); err != nil {
				return out, err
			}
			next = next.Add(every)
		}
		ev := drill.Order(t.o.Seed, t.run, i)
		w := cdc.Written{N: int(ev.Seq), OrderID: ev.OrderID, Committed: time.Now()}
		var err error
		if t.prod != Relay {
			w, err = cdc.Place(ctx, t.app, ev)
		} else {
			err = pgx.BeginFunc(ctx, t.app, func(tx pgx.Tx) error { return outbox.PlaceOrder(ctx, tx, ev, nil) })
			w.Committed = time.Now()
		}
		if err != nil {
			return out, err
		}
		out = append(out, w)
	}
	return out, nil
}

// startProducer starts the relay or the reader as a process of its own, or
// registers the Debezium connector.
func (t *trial) startProducer(ctx context.Context, cfg brewkit.Config) error {
	var err error
	switch t.prod {
	case Relay:
		t.child, err = start(ctx, cfg, t.o.Command, AppName(t.o, t.prod), "relay", "-schema", t.n.schema, "-topic", t.n.topic)
	case CDC:
		t.child, err = start(ctx, cfg, t.o.Command, AppName(t.o, t.prod), "reader", "-slot", t.n.slot, "-publication", t.n.slot, "-topic", t.n.topic)
	case Debezium:
		var config map[string]string
		if config, err = debezium.ConnectorConfig(t.n.connector, t.n.schema, t.n.slot, t.n.slot, t.n.topic); err == nil {
			if err = t.o.Connect.Put(ctx, t.n.connector, config); err == nil {
				err = t.o.Connect.WaitRunning(ctx, t.n.connector, 60*time.Second)
			}
		}
	}
	if err == nil && t.child != nil {
		t.stop = stopper(t.child)
	}
	return err
}

// drainRate waits for the backlog's events and measures their rate, first
// arrival to last.
func (t *trial) drainRate(ctx context.Context) error {
	if err := t.tail.Wait(ctx, t.o.Backlog, 2*time.Minute); err != nil {
		return err
	}
	events := t.tail.Events()
	first, last := events[0].At, events[0].At
	for _, e := range events {
		if e.At.After(last) {
			last = e.At
		}
	}
	if d := last.Sub(first); d > 0 {
		t.row.PerSec = float64(t.o.Backlog-1) / d.Seconds()
	}
	return nil
}

// latency waits for the steady orders' events and measures COMMIT to
// consumer.
func (t *trial) latency(ctx context.Context, steady []cdc.Written) error {
	if err := t.tail.Wait(ctx, t.o.Backlog+t.o.Steady, 2*time.Minute); err != nil {
		return err
	}
	var lat []time.Duration
	for _, w := range steady {
		lat = append(lat, t.tail.FirstAt(w.OrderID).Sub(w.Committed))
	}
	slices.Sort(lat)
	t.row.P50, t.row.P99 = quantile(lat, 0.50), quantile(lat, 0.99)
	return nil
}

// cost reads the CPU of the PostgreSQL backends that served the producer,
// and its process's memory.
func (t *trial) cost(ctx context.Context) error {
	cpu, err := backendCPU(ctx, t.p, AppName(t.o, t.prod), t.n.slot)
	if err != nil {
		return err
	}
	t.row.PGCPU = cpu
	switch t.prod {
	case Debezium:
		t.row.Process = "Connect worker (JVM)"
		if t.o.Worker != nil {
			if pid, err := t.o.Worker.PID(ctx); err == nil && pid > 0 {
				t.row.RSS = rss(pid)
			}
		}
	default:
		t.row.Process = "Go process"
		t.row.RSS = rss(t.child.Process.Pid)
	}
	return nil
}

// release stops the producer: the child, the connector, the slot. The
// relay first deletes the rows it sent (relayDeleted says why).
func (t *trial) release(ctx context.Context) error {
	if t.prod == Relay {
		if err := relayDeleted(ctx, t.p, t.n.schema, int64(t.o.Backlog+t.o.Steady)); err != nil {
			return err
		}
	}
	if err := t.stop(); err != nil {
		return err
	}
	if t.prod == Debezium {
		if err := t.o.Connect.Remove(ctx, t.n.connector); err != nil {
			return err
		}
	}
	if t.prod != Relay {
		return cdc.Release(ctx, t.p, t.n.slot, t.n.slot)
	}
	return nil
}

// tally counts what reached Kafka against what was written.
func (t *trial) tally(written []cdc.Written) {
	events := t.tail.Events()
	count := drill.Count(cdc.Gots(events))
	t.row.Written, t.row.Unique = len(written), len(count)
	for _, w := range written {
		if count[w.OrderID] == 0 {
			t.row.Lost++
		}
	}
	t.row.Duplicates = len(events) - len(count)
}

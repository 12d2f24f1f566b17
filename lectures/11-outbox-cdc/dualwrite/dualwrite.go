// Package dualwrite is order-service writing each order twice, to its
// PostgreSQL table and to Kafka, with nothing tying the two writes
// together, and what a kill -9 between them leaves behind: for each order
// of the two writes, the orders the table has and Kafka does not (lost
// events) and the events Kafka has of orders the table does not (invented
// events).
package dualwrite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Mode is an order of the two writes.
type Mode string

// The orders of the two writes.
const (
	RowFirst   Mode = "row-first"   // INSERT (committed), then produce
	EventFirst Mode = "event-first" // produce (acknowledged), then INSERT
	InTx       Mode = "in-tx"       // BEGIN, INSERT, produce (acknowledged), COMMIT
)

// Modes are the three, in the order the README shows them.
var Modes = []Mode{RowFirst, EventFirst, InTx}

// Says is what a mode is, in the README's words.
func (m Mode) Says() string {
	switch m {
	case RowFirst:
		return "row, then event"
	case EventFirst:
		return "event, then row"
	case InTx:
		return "event inside the row's transaction"
	}
	return string(m)
}

// ParseMode reads a mode's name.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("not one of %v", Modes)
}

// DDL is order-service's table.
var DDL = []string{`CREATE TABLE orders (
	run         text        NOT NULL,
	order_id    text        NOT NULL,
	shop_id     text        NOT NULL,
	items       text[]      NOT NULL,
	total_cents bigint      NOT NULL,
	placed_at   timestamptz NOT NULL,
	PRIMARY KEY (run, order_id))`}

// Options set up a demo.
type Options struct {
	Topic   string   // where the events go
	Schema  string   // order-service's schema (reset by Run)
	Orders  int      // orders written in each mode
	Kills   int      // how many times the writer is killed in each mode
	Seed    uint64   // the kill points and the orders
	Run     string   // names the run's events and rows
	Command []string // the writer: this program's `writer` subcommand (drill.Self)
	// Progress, when set, gets a line per writer process.
	Progress func(string)
}

// Defaults are the lecture's demo.
var Defaults = Options{Topic: "brew.outbox.dual-write", Schema: "dual_write", Orders: 100, Kills: 5, Seed: 11}

// Row is what one mode left behind.
type Row struct {
	Mode       Mode
	Killed     []int // the orders the writer was killed at, between the two writes
	Rows       int   // orders in the table
	Events     int   // orders with an event in Kafka
	RowNoEvent int   // orders in the table with no event: lost events
	EventNoRow int   // events of orders the table does not have: invented events
	Duplicates int   // orders with more than one event
	LostIDs    []string
	InventedID []string
	Timing     Timing // of the writer that was not killed
}

// Timing is how long a writer's orders took.
type Timing struct {
	Orders int           `json:"orders"`
	Window time.Duration `json:"window"` // spent after the first write was done, before the second was: where a kill leaves one of the two
	Total  time.Duration `json:"total"`  // both writes
}

// Share is the part of a writer's time in which a kill at a random moment
// leaves one write without the other.
func (t Timing) Share() float64 {
	if t.Total <= 0 {
		return 0
	}
	return float64(t.Window) / float64(t.Total)
}

// Result is the demo's table.
type Result struct {
	Orders, Kills int
	Seed          uint64
	Rows          []Row
}

// Run resets the schema, then for each mode runs writer processes until
// o.Orders orders are written, killing each at the next kill point between
// its two writes, and counts what the table and the topic hold.
func Run(ctx context.Context, cfg brewkit.Config, o Options) (Result, error) {
	cl, adm, err := drill.Kafka(ctx, cfg, brewkit.TopicNamed(o.Topic, 6))
	if err != nil {
		return Result{}, err
	}
	defer cl.Close()
	p, err := db.Connect(ctx)
	if err != nil {
		return Result{}, err
	}
	defer p.Close()
	if err := db.ResetSchema(ctx, p, o.Schema, DDL...); err != nil {
		return Result{}, err
	}
	from, err := drill.Start(ctx, adm, o.Topic)
	if err != nil {
		return Result{}, err
	}
	res := Result{Orders: o.Orders, Kills: o.Kills, Seed: o.Seed}
	// Kill points leave the last fifth of the orders to a writer that ends
	// on its own, and reports how long the two writes took.
	kills := drill.Points(o.Seed, o.Kills, 0, o.Orders-max(1, o.Orders/5))
	for _, m := range Modes {
		row, err := writeMode(ctx, cfg, o, m, kills)
		if err != nil {
			return res, err
		}
		res.Rows = append(res.Rows, row)
	}

	events, err := drill.Read(ctx, cfg, adm, o.Topic, from, o.Run+"/")
	if err != nil {
		return res, err
	}
	for i := range res.Rows {
		r := &res.Rows[i]
		rows, err := orderIDs(ctx, p, o.Schema, o.Run+"/"+string(r.Mode))
		if err != nil {
			return res, err
		}
		r.tally(o.Run+"/"+string(r.Mode), rows, events)
	}
	return res, nil
}

// writeMode writes every order in mode m, the writer killed -9 between its
// two writes at each of kills and started again from the next order; the
// last writer ends on its own and reports its timing.
func writeMode(ctx context.Context, cfg brewkit.Config, o Options, m Mode, kills []int) (Row, error) {
	row := Row{Mode: m, Killed: kills}
	next := 0
	for _, k := range append(slices.Clone(kills), -1) {
		args := []string{"-mode", string(m), "-topic", o.Topic, "-schema", o.Schema, "-run", o.Run + "/" + string(m),
			"-seed", strconv.FormatUint(o.Seed, 10), "-from", strconv.Itoa(next), "-to", strconv.Itoa(o.Orders), "-kill-at", strconv.Itoa(k)}
		killed, out, err := drill.ChildOutput(ctx, cfg, o.Command, args...)
		if err != nil {
			return row, fmt.Errorf("writer (%s): %w", m, err)
		}
		switch {
		case k >= 0 && !killed:
			return row, fmt.Errorf("writer (%s) was to be killed at order %d, and it ended", m, k)
		case k < 0 && killed:
			return row, fmt.Errorf("writer (%s) was killed with no kill point", m)
		case k < 0:
			if err := json.Unmarshal(out, &row.Timing); err != nil {
				return row, fmt.Errorf("writer (%s) reported %q: %w", m, out, err)
			}
		}
		if o.Progress != nil {
			if k >= 0 {
				o.Progress(fmt.Sprintf("%-12s orders %3d-%3d written, killed -9 at order %d between the two writes", m, next, k, k))
			} else {
				o.Progress(fmt.Sprintf("%-12s orders %3d-%3d written", m, next, o.Orders-1))
			}
		}
		next = k + 1
	}
	return row, nil
}

// tally counts the events of run against the orders table's rows: a row
// with no event, an event with no row, an order sent more than once.
func (r *Row) tally(run string, rows map[string]bool, events []drill.Got) {
	var mine []drill.Got
	for _, e := range events {
		if e.Run == run {
			mine = append(mine, e)
		}
	}
	got := drill.Count(mine)
	r.Rows, r.Events = len(rows), len(got)
	for _, id := range slices.Sorted(maps.Keys(rows)) {
		if got[id] == 0 {
			r.RowNoEvent++
			r.LostIDs = append(r.LostIDs, id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(got)) {
		if !rows[id] {
			r.EventNoRow++
			r.InventedID = append(r.InventedID, id)
		}
		if got[id] > 1 {
			r.Duplicates++
		}
	}
}

func orderIDs(ctx context.Context, p *pgxpool.Pool, schema, run string) (map[string]bool, error) {
	rows, err := p.Query(ctx, "SELECT order_id FROM "+pgx.Identifier{schema, "orders"}.Sanitize()+" WHERE run = $1", run)
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// Writer is one order-service process: it writes orders From..To-1 in its
// Mode, and gets SIGKILL between the two writes of order KillAt (< 0: never).
type Writer struct {
	Mode          Mode
	Topic, Schema string
	Run           string
	Seed          uint64
	From, To      int
	KillAt        int
	Kill          func() // what kills it: brewkit.Crash unless set
}

// Write runs w. Each order's event is acknowledged (acks=all) before the
// writer goes on. It returns how long the writes took.
func Write(ctx context.Context, cfg brewkit.Config, w Writer) (Timing, error) {
	var t Timing
	p, err := db.ConnectIn(ctx, w.Schema)
	if err != nil {
		return t, err
	}
	defer p.Close()
	cl, err := brewkit.NewClient(cfg, kgo.DefaultProduceTopic(w.Topic))
	if err != nil {
		return t, err
	}
	defer cl.Close()
	kill := w.Kill
	if kill == nil {
		kill = brewkit.Crash
	}
	for n := w.From; n < w.To; n++ {
		ev := drill.Order(w.Seed, w.Run, n)
		start := time.Now()
		var first time.Time
		between := func() {
			first = time.Now()
			if n == w.KillAt {
				kill()
			}
		}
		switch w.Mode {
		case RowFirst:
			if err := insertOrder(ctx, p, w.Run, ev); err != nil {
				return t, err
			}
			between()
			if err := produce(ctx, cl, w.Topic, ev); err != nil {
				return t, err
			}
		case EventFirst:
			if err := produce(ctx, cl, w.Topic, ev); err != nil {
				return t, err
			}
			between()
			if err := insertOrder(ctx, p, w.Run, ev); err != nil {
				return t, err
			}
		case InTx:
			err := pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error {
				if err := insertOrder(ctx, tx, w.Run, ev); err != nil {
					return err
				}
				// From here on the event may be in Kafka (it is, once
				// acknowledged) and the row is not until the commit.
				first = time.Now()
				if err := produce(ctx, cl, w.Topic, ev); err != nil {
					return err
				}
				if n == w.KillAt {
					kill()
				}
				return nil
			})
			if err != nil {
				return t, err
			}
		default:
			return t, errors.New("unknown mode " + string(w.Mode))
		}
		end := time.Now()
		if n == w.From && n+1 < w.To {
			continue // the first order's writes open the connections
		}
		t.Orders++
		t.Window += end.Sub(first)
		t.Total += end.Sub(start)
	}
	return t, nil
}

// execer is a pool or a transaction.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

func insertOrder(ctx context.Context, q execer, run string, ev brewkit.Event) error {
	_, err := q.Exec(ctx, `INSERT INTO orders (run, order_id, shop_id, items, total_cents, placed_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, run, ev.OrderID, ev.ShopID, ev.Items, ev.Cents, ev.At)
	if err != nil {
		return fmt.Errorf("inserting %s: %w", ev.OrderID, err)
	}
	return nil
}

func produce(ctx context.Context, cl *kgo.Client, topic string, ev brewkit.Event) error {
	if err := cl.ProduceSync(ctx, ev.Record(topic)).FirstErr(); err != nil {
		return fmt.Errorf("producing %s: %w", ev.OrderID, err)
	}
	return nil
}

// Package outbox is the transactional outbox: order-service writes each
// order and its OrderPlaced event (an outbox row) in one PostgreSQL
// transaction, and a relay publishes the outbox to Kafka with an idempotent
// producer, taking batches with SELECT ... FOR UPDATE SKIP LOCKED (so that
// two relays at once never take the same rows) and deleting what it sent
// only after Kafka acknowledged it, in the same transaction that locked it.
// The drill kills order-service and the relays with SIGKILL at seeded points
// of every step and counts what reached Kafka: no event lost, none
// invented, and duplicates only from relays killed after Kafka's ack and
// before their DELETE committed.
package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// DDL is order-service's schema: its orders and its outbox.
var DDL = []string{
	`CREATE TABLE orders (
	order_id    text        PRIMARY KEY,
	run         text        NOT NULL,
	shop_id     text        NOT NULL,
	items       text[]      NOT NULL,
	total_cents bigint      NOT NULL,
	placed_at   timestamptz NOT NULL)`,
	`CREATE TABLE outbox (
	id           bigserial   PRIMARY KEY,
	event_id     uuid        NOT NULL UNIQUE DEFAULT gen_random_uuid(),
	aggregate_id text        NOT NULL,
	type         text        NOT NULL,
	payload      jsonb       NOT NULL,
	created_at   timestamptz NOT NULL DEFAULT now())`,
}

// Stage is where in its work a process is killed.
type Stage string

// Where order-service and the relay are killed.
const (
	AfterOrder   Stage = "order"   // order-service: the order INSERTed, not its outbox row
	BeforeCommit Stage = "outbox"  // order-service: both INSERTed, before COMMIT
	Locked       Stage = "locked"  // relay: a batch locked, nothing sent
	Acked        Stage = "acked"   // relay: the batch acknowledged by Kafka, before DELETE
	Deleted      Stage = "deleted" // relay: DELETEd, before COMMIT
)

// WriterStages and RelayStages are the stages the drill kills at, in turn.
var (
	WriterStages = []Stage{AfterOrder, BeforeCommit}
	RelayStages  = []Stage{Locked, Acked, Deleted}
)

// Says is what a kill at s is, in the README's words.
func (s Stage) Says() string {
	switch s {
	case AfterOrder:
		return "order-service, after the order's INSERT"
	case BeforeCommit:
		return "order-service, before COMMIT"
	case Locked:
		return "relay, batch locked, nothing sent"
	case Acked:
		return "relay, Kafka acked, before DELETE"
	case Deleted:
		return "relay, DELETE done, before COMMIT"
	}
	return string(s)
}

// Resends reports whether a relay killed at s has its batch sent again.
func (s Stage) Resends() bool { return s == Acked || s == Deleted }

// Options set up a drill.
type Options struct {
	Topic       string
	Schema      string // order-service's schema (reset by Run)
	Orders      int
	WriterKills int // order-service killed inside its transaction
	Relays      int // relays at once
	Batch       int // outbox rows a relay takes at once
	RelayKills  int
	Seed        uint64
	Run         string
	Command     []string // this program's subcommand prefix: Command + "orders" | "relay" (drill.Self(""))
	Progress    func(string)
}

// Defaults are the lecture's drill.
var Defaults = Options{Topic: "brew.outbox.orders", Schema: "outbox", Orders: 200, WriterKills: 4,
	Relays: 2, Batch: 10, RelayKills: 6, Seed: 7}

// Kill is one kill of the drill and what it left.
type Kill struct {
	Stage  Stage
	At     string // the order (order-service) or the outbox row id (relay)
	Relay  int    // which relay (1-based); 0: order-service
	Resent int    // events of its batch that a relay had sent and sends again
}

// Result is what the drill counted.
type Result struct {
	Orders, Relays, Batch int
	Kills                 []Kill
	Rows                  int // orders in the table
	Outbox                int // outbox rows left
	Events                int // records of the run in Kafka
	Distinct              int // distinct event ids among them
	Lost                  int // orders in the table without an event
	Invented              int // events of orders not in the table
	Duplicates            int // Events - Distinct
	Resent                int // what the kills say was sent again: the sum of Kill.Resent
	SentBy                []int
	LostIDs, InventedIDs  []string
	From                  map[int32]int64 // where the run begins in the topic
}

// Run resets the schema, writes o.Orders orders with order-service
// processes killed inside their transaction, then relays the outbox with
// o.Relays relay processes at once, each killed at seeded rows and stages
// and started again, until the outbox is empty, and counts what reached the
// topic.
func Run(ctx context.Context, cfg brewkit.Config, o Options) (Result, error) {
	res := Result{Orders: o.Orders, Relays: o.Relays, Batch: o.Batch, SentBy: make([]int, o.Relays)}
	cl, adm, err := drill.Kafka(ctx, cfg, brewkit.TopicNamed(o.Topic, 6))
	if err != nil {
		return res, err
	}
	defer cl.Close()
	p, err := db.Connect(ctx)
	if err != nil {
		return res, err
	}
	defer p.Close()
	if err := db.ResetSchema(ctx, p, o.Schema, DDL...); err != nil {
		return res, err
	}
	from, err := drill.Start(ctx, adm, o.Topic)
	if err != nil {
		return res, err
	}
	res.From = from
	if err := writeOrders(ctx, cfg, o, &res); err != nil {
		return res, err
	}
	relayArgs, cleanup, err := relayPlan(ctx, p, o)
	if err != nil {
		return res, err
	}
	defer cleanup()
	if err := runRelays(ctx, cfg, o, relayArgs, &res); err != nil {
		return res, err
	}

	// What reached Kafka.
	rows, err := orderIDs(ctx, p, o.Schema)
	if err != nil {
		return res, err
	}
	if err := p.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{o.Schema, "outbox"}.Sanitize()).Scan(&res.Outbox); err != nil {
		return res, err
	}
	read, err := drill.Read(ctx, cfg, adm, o.Topic, from, o.Run)
	if err != nil {
		return res, err
	}
	res.tally(o.Run, rows, read)
	return res, nil
}

// writeOrders runs order-service, killed -9 inside its transaction at
// seeded orders and started again from the next, until every order is
// written.
func writeOrders(ctx context.Context, cfg brewkit.Config, o Options, res *Result) error {
	seed := strconv.FormatUint(o.Seed, 10)
	next := 0
	for i, k := range append(drill.Points(o.Seed, o.WriterKills, 0, o.Orders-1), -1) {
		stage := WriterStages[i%len(WriterStages)]
		args := []string{"-schema", o.Schema, "-run", o.Run, "-seed", seed,
			"-from", strconv.Itoa(next), "-to", strconv.Itoa(o.Orders), "-kill-at", strconv.Itoa(k), "-kill-stage", string(stage)}
		killed, err := drill.Child(ctx, cfg, append(slices.Clone(o.Command), "orders"), args...)
		if err != nil {
			return fmt.Errorf("order-service: %w", err)
		}
		if killed != (k >= 0) {
			return fmt.Errorf("order-service: killed %v, and its kill point was %d", killed, k)
		}
		if k >= 0 {
			res.Kills = append(res.Kills, Kill{Stage: stage, At: brewkit.OrderID(int64(k))})
			o.progress("order-service: orders %d-%d, killed -9 at %s (%s)", next, k, brewkit.OrderID(int64(k)), stage)
		} else {
			o.progress("order-service: orders %d-%d written", next, o.Orders-1)
		}
		next = k + 1
	}
	return nil
}

// relayPlan is the relays' flags on the full outbox: kill points at seeded
// rows, away from the end so that every killed batch is a full one, and a
// folder where a relay marks a kill fired (removed by cleanup).
func relayPlan(ctx context.Context, p *pgxpool.Pool, o Options) (args []string, cleanup func(), err error) {
	ids, err := outboxIDs(ctx, p, o.Schema)
	if err != nil {
		return nil, nil, err
	}
	var plan []string
	last := max(1, len(ids)-(o.Relays+1)*o.Batch)
	for i, pos := range drill.Points(o.Seed+1, o.RelayKills, 0, last) {
		plan = append(plan, fmt.Sprintf("%s:%d", RelayStages[i%len(RelayStages)], ids[pos]))
	}
	fired, err := os.MkdirTemp("", "brew-outbox-kills-")
	if err != nil {
		return nil, nil, err
	}
	args = []string{"-schema", o.Schema, "-topic", o.Topic, "-batch", strconv.Itoa(o.Batch),
		"-until-empty", "-kills", strings.Join(plan, ","), "-fired", fired}
	return args, func() { os.RemoveAll(fired) }, nil
}

// runRelays runs o.Relays relays side by side, each started again after
// its kill, until the outbox is empty, and notes their kills and sends.
func runRelays(ctx context.Context, cfg brewkit.Config, o Options, relayArgs []string, res *Result) error {
	var mu sync.Mutex
	errs := make(chan error, o.Relays)
	for r := 1; r <= o.Relays; r++ {
		go func() {
			for {
				killed, out, err := drill.ChildOutput(ctx, cfg, append(slices.Clone(o.Command), "relay"), relayArgs...)
				if err != nil {
					errs <- fmt.Errorf("relay %d: %w", r, err)
					return
				}
				reports, perr := parseReports(out)
				mu.Lock()
				res.note(o, r, reports)
				mu.Unlock()
				if perr != nil {
					errs <- fmt.Errorf("relay %d: %w", r, perr)
					return
				}
				if !killed {
					o.progress("relay %d: the outbox is empty", r)
					errs <- nil
					return
				}
			}
		}()
	}
	var err error
	for range o.Relays {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	return err
}

// note adds relay r's reports: its kills and what it sent.
func (res *Result) note(o Options, r int, reports []Report) {
	for _, rep := range reports {
		switch {
		case rep.Killed != "":
			k := Kill{Stage: Stage(rep.Killed), At: strconv.FormatInt(rep.At, 10), Relay: r}
			if k.Stage.Resends() {
				k.Resent = rep.Events
			}
			res.Kills = append(res.Kills, k)
			o.progress("relay %d: killed -9 at outbox row %d (%s), its batch of %d", r, rep.At, rep.Killed, rep.Events)
		default:
			res.SentBy[r-1] += rep.Events
		}
	}
}

// tally counts what reached Kafka (read, the events of run) against the
// orders table's rows: duplicates, lost orders, invented ones, resent.
func (res *Result) tally(run string, rows map[string]bool, read []drill.Got) {
	var events []drill.Got
	eventIDs := map[string]bool{}
	for _, e := range read {
		if e.Run == run {
			events = append(events, e)
			eventIDs[e.ID] = true
		}
	}
	byOrder := drill.Count(events)
	res.Rows, res.Events, res.Distinct = len(rows), len(events), len(eventIDs)
	res.Duplicates = res.Events - res.Distinct
	for _, id := range slices.Sorted(maps.Keys(rows)) {
		if byOrder[id] == 0 {
			res.Lost++
			res.LostIDs = append(res.LostIDs, id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(byOrder)) {
		if !rows[id] {
			res.Invented++
			res.InventedIDs = append(res.InventedIDs, id)
		}
	}
	for _, k := range res.Kills {
		res.Resent += k.Resent
	}
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

func outboxIDs(ctx context.Context, p *pgxpool.Pool, schema string) ([]int64, error) {
	rows, err := p.Query(ctx, "SELECT id FROM "+pgx.Identifier{schema, "outbox"}.Sanitize()+" ORDER BY id")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

func orderIDs(ctx context.Context, p *pgxpool.Pool, schema string) (map[string]bool, error) {
	rows, err := p.Query(ctx, "SELECT order_id FROM "+pgx.Identifier{schema, "orders"}.Sanitize())
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

// Report is a relay's line on stdout: a batch it committed, or the batch
// it is killed in (Killed names the stage, At the planned outbox row).
type Report struct {
	Events int    `json:"events"`
	Killed string `json:"killed,omitempty"`
	At     int64  `json:"at,omitempty"`
}

func parseReports(out []byte) ([]Report, error) {
	var reps []Report
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l == "" {
			continue
		}
		var r Report
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			return reps, fmt.Errorf("a report %q: %w", l, err)
		}
		reps = append(reps, r)
	}
	return reps, nil
}

// Package debezium is the cdc pipeline on Kafka Connect: Debezium's
// PostgreSQL connector reads order-service's outbox from a pgoutput slot and
// its outbox event router (io.debezium.transforms.outbox.EventRouter) turns
// each row into an OrderPlaced record. The demo registers the connector
// through Connect's REST API, shows a record and the connector's offset in
// Connect's offsets topic, kills the worker with SIGKILL while order-service
// writes and starts it again, counts what reached the topic, and deletes the
// connector, its offsets and its slot.
package debezium

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/cdc"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// The connector's classes.
const (
	ConnectorClass = stand.PostgresConnector
	RouterClass    = "io.debezium.transforms.outbox.EventRouter"
)

// ConnectorConfig is the connector of the demo: Debezium reads schema's
// outbox table through slot and publication (both created beforehand, so
// that nothing committed before the connector first connects is missed:
// snapshot.mode no_data takes no snapshot of the table and starts where the
// slot is), and the outbox event router writes each row's payload to topic,
// keyed by aggregateid, with the row's id and type in headers. Key and value
// are plain strings (the payload is already JSON).
func ConnectorConfig(name, schema, slot, publication, topic string) (map[string]string, error) {
	pc, err := pgconn.ParseConfig(db.DSN())
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL at %s: %w", db.DSN(), err)
	}
	cfg := map[string]string{
		"connector.class":             ConnectorClass,
		"tasks.max":                   "1",
		"plugin.name":                 cdc.Plugin,
		"database.hostname":           pc.Host,
		"database.port":               strconv.Itoa(int(pc.Port)),
		"database.user":               pc.User,
		"database.dbname":             pc.Database,
		"topic.prefix":                name,
		"slot.name":                   slot,
		"publication.name":            publication,
		"publication.autocreate.mode": "disabled",
		"table.include.list":          schema + ".outbox",
		"snapshot.mode":               "no_data",
		"key.converter":               "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":             "org.apache.kafka.connect.storage.StringConverter",
		// How long the task waits for changes to fill a batch (500 ms by
		// default): the relay's poll interval, for the comparison.
		"poll.interval.ms":       "100",
		"transforms":             "outbox",
		"transforms.outbox.type": RouterClass,
		// Every row to one topic (the default is outbox.event.<aggregatetype>).
		"transforms.outbox.route.topic.replacement":           topic,
		"transforms.outbox.table.fields.additional.placement": "type:header:type",
	}
	if pc.Password != "" {
		cfg["database.password"] = pc.Password
	}
	return cfg, nil
}

// Options set up the demo.
type Options struct {
	Connector   string // the connector's name (deleted first if it exists)
	Topic       string
	Schema      string // order-service's schema (reset by Run)
	Slot        string
	Publication string
	Orders      int
	Every       time.Duration // order-service's pace
	KillAt      int           // the worker is killed once this order committed; < 0: never
	Run         string        // names the run's events
	Connect     *Connect
	// OffsetsTopic is the worker's offset.storage.topic.
	OffsetsTopic string
	Worker       Worker // kills and starts the worker (when KillAt >= 0)
	Progress     func(string)
}

// Defaults are the lecture's demo.
var Defaults = Options{Connector: "brew-outbox", Topic: "brew.outbox.debezium", Schema: "debezium", Slot: "brew_debezium",
	Publication: "brew_debezium", Orders: 200, Every: 20 * time.Millisecond, KillAt: 80, OffsetsTopic: stand.ConnectOffsetsTopic}

// Record is a record as the router wrote it.
type Record struct {
	Topic, Key, Value string
	Headers           [][2]string
}

// Header is the value of header key ("" when absent).
func (r Record) Header(key string) string {
	for _, h := range r.Headers {
		if h[0] == key {
			return h[1]
		}
	}
	return ""
}

// Result is what the demo measured.
type Result struct {
	Orders     int
	Registered time.Duration // from the PUT until the connector's task runs
	Sample     Record        // the first order's record
	SampleRow  cdc.Written   // its outbox row

	OffsetsTopic string
	OffsetKey    string   // the connector's last record in the offsets topic
	OffsetValue  string   // its value (JSON)
	RestOffsets  []Offset // GET /connectors/NAME/offsets

	Killed      string        // what was killed ("pid 1234"); "" when not
	KilledAfter string        // the last order committed before the kill
	WorkerBack  time.Duration // from the worker gone (killed -9) until its REST API served again
	Delivering  time.Duration // from the worker gone until the first record of an order committed after that arrived

	Written    int
	Events     int
	Unique     int
	Lost       []string
	Duplicates int

	Removed     bool // connector stopped, offsets and connector deleted
	SlotDropped bool
}

// Run resets the schema, creates the slot and the publication, registers
// the connector, writes the orders (killing and restarting the worker once
// KillAt committed), waits for every order's record, and removes the
// connector, its offsets, the slot and the publication.
func Run(ctx context.Context, cfg brewkit.Config, o Options) (Result, error) {
	res := Result{Orders: o.Orders, OffsetsTopic: o.OffsetsTopic}
	say := func(format string, args ...any) {
		if o.Progress != nil {
			o.Progress(fmt.Sprintf(format, args...))
		}
	}
	c := o.Connect
	cl, adm, err := drill.Kafka(ctx, cfg, brewkit.TopicNamed(o.Topic, 6))
	if err != nil {
		return res, err
	}
	defer cl.Close()
	if o.KillAt >= 0 {
		if o.Worker == nil {
			return res, errors.New("a worker kill (-kill-at) needs the worker's control (Options.Worker)")
		}
		if err := o.Worker.Ready(ctx); err != nil {
			return res, err
		}
	}
	p, err := db.Connect(ctx)
	if err != nil {
		return res, err
	}
	defer p.Close()
	if err := c.Remove(ctx, o.Connector); err != nil {
		return res, err
	}
	if err := cdc.Release(ctx, p, o.Publication, o.Slot); err != nil {
		return res, err
	}
	if err := db.ResetSchema(ctx, p, o.Schema, cdc.DDL...); err != nil {
		return res, err
	}
	if err := cdc.Capture(ctx, p, o.Schema, o.Publication, o.Slot); err != nil {
		return res, err
	}
	// Whatever happens, the connector and the slot do not outlive the demo.
	cleanup := func(ctx context.Context) error {
		return errors.Join(c.Remove(ctx, o.Connector), cdc.Release(ctx, p, o.Publication, o.Slot))
	}
	defer func() {
		if !res.Removed {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 40*time.Second)
			defer cancel()
			_ = cleanup(cctx)
		}
	}()
	app, err := db.ConnectIn(ctx, o.Schema)
	if err != nil {
		return res, err
	}
	defer app.Close()
	from, err := drill.Start(ctx, adm, o.Topic)
	if err != nil {
		return res, err
	}
	tail, err := cdc.StartTail(ctx, cfg, o.Topic, from, o.Run)
	if err != nil {
		return res, err
	}
	defer tail.Close()

	config, err := ConnectorConfig(o.Connector, o.Schema, o.Slot, o.Publication, o.Topic)
	if err != nil {
		return res, err
	}
	start := time.Now()
	if err := c.Put(ctx, o.Connector, config); err != nil {
		return res, err
	}
	if err := c.WaitRunning(ctx, o.Connector, 60*time.Second); err != nil {
		return res, err
	}
	res.Registered = time.Since(start)
	say("connector %s registered on %s, running in %s", o.Connector, c.Host(), res.Registered.Round(time.Millisecond))

	var mu sync.Mutex
	var written []cdc.Written
	committed := make(chan int, o.Orders)
	wdone := make(chan error, 1)
	var beforeLast pglogrepl.LSN // where the WAL ended before the last order
	go func() {
		w := cdc.Writes{Schema: o.Schema, Run: o.Run, Seed: 11, To: o.Orders - 1, Every: o.Every,
			Written: func(w cdc.Written) { committed <- w.N }}
		got, err := cdc.Write(ctx, app, w)
		if err == nil {
			var lsn string
			if lsn, err = cdc.CurrentLSN(ctx, p); err == nil {
				beforeLast, err = pglogrepl.ParseLSN(lsn)
			}
		}
		if err == nil {
			w.From, w.To = o.Orders-1, o.Orders
			var last []cdc.Written
			last, err = cdc.Write(ctx, app, w)
			got = append(got, last...)
		}
		mu.Lock()
		written = got
		mu.Unlock()
		wdone <- err
	}()
	var killedAt time.Time
	if o.KillAt >= 0 && o.KillAt < o.Orders {
		for n := range committed {
			if n >= o.KillAt {
				break
			}
		}
		res.KilledAfter = brewkit.OrderID(int64(o.KillAt))
		if res.Killed, err = o.Worker.Kill(ctx); err != nil {
			return res, err
		}
		// The clock starts once the worker is gone, not when the kill was
		// asked for: until its process has ended it may still send orders
		// committed meanwhile, and finding its pid takes a moment.
		killedAt = time.Now()
		say("worker killed -9 (%s) after %s committed; order-service goes on writing", res.Killed, res.KilledAfter)
		if err := o.Worker.Start(ctx); err != nil {
			return res, err
		}
		res.WorkerBack = time.Since(killedAt)
		// The status says RUNNING at once (the status topic's last word, by
		// the worker that died); the task runs again once the group let the
		// dead member go. A task that failed shows here.
		if err := c.WaitRunning(ctx, o.Connector, 2*time.Minute); err != nil {
			return res, err
		}
		say("worker back in %s; waiting for its records", res.WorkerBack.Round(100*time.Millisecond))
	}
	if err := <-wdone; err != nil {
		return res, err
	}
	mu.Lock()
	res.Written = len(written)
	mu.Unlock()
	if err := tail.Wait(ctx, len(written), 2*time.Minute); err != nil {
		return res, err
	}
	events := tail.Events()
	if !killedAt.IsZero() {
		// The first record of an order committed after the kill: only the
		// restarted worker can have sent it.
		after := map[string]bool{}
		for _, w := range written {
			if w.Committed.After(killedAt) {
				after[w.OrderID] = true
			}
		}
		for _, e := range events {
			if after[e.OrderID] {
				res.Delivering = e.At.Sub(killedAt)
				break
			}
		}
	}
	say("all %d orders in %s", len(written), o.Topic)
	for _, e := range events {
		if e.OrderID == written[0].OrderID {
			res.Sample = recordOf(e.Record)
			res.SampleRow = written[0]
			break
		}
	}
	res.Events = len(events)
	count := drill.Count(cdc.Gots(events))
	res.Unique = len(count)
	for _, w := range written {
		if count[w.OrderID] == 0 {
			res.Lost = append(res.Lost, w.OrderID)
		}
	}
	for _, n := range count {
		res.Duplicates += n - 1
	}

	// Connect stores the connector's position every offset.flush.interval.ms
	// (1 s on the stand): wait for the one of the last order.
	if res.RestOffsets, err = waitOffsets(ctx, c, o.Connector, beforeLast); err != nil {
		return res, err
	}
	if res.OffsetKey, res.OffsetValue, err = lastOffsetRecord(ctx, cfg, adm, o.OffsetsTopic, o.Connector); err != nil {
		return res, err
	}

	if err := cleanup(ctx); err != nil {
		return res, err
	}
	res.Removed = true
	st, err := cdc.Slot(ctx, p, o.Slot)
	if err != nil {
		return res, err
	}
	res.SlotDropped = !st.Exists
	return res, nil
}

func recordOf(r *kgo.Record) Record {
	out := Record{Topic: r.Topic, Key: string(r.Key), Value: string(r.Value)}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, [2]string{h.Key, string(h.Value)})
	}
	return out
}

// waitOffsets waits (at most 30 s) until the connector's stored offset is
// past lsn: its "lsn" is the position of the last change it sent.
func waitOffsets(ctx context.Context, c *Connect, name string, lsn pglogrepl.LSN) ([]Offset, error) {
	var offs []Offset
	var last error
	err := brewkit.WaitFor(ctx, 30*time.Second, 100*time.Millisecond, func() bool {
		offs, last = c.Offsets(ctx, name)
		for _, o := range offs {
			if n, ok := o.Offset["lsn"].(float64); ok && pglogrepl.LSN(n) >= lsn {
				return true
			}
		}
		return false
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("connector %s stored no offset past %s within 30 s (%v)", name, lsn, offs), last)
	}
	return offs, nil
}

// lastOffsetRecord reads Connect's offsets topic and returns the key and
// value of the connector's last record in it: ["NAME",{"server":"NAME"}].
func lastOffsetRecord(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, topic, name string) (key, value string, err error) {
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return "", "", err
	}
	if err := starts.Error(); err != nil {
		return "", "", fmt.Errorf("Connect's offsets topic %s: %w", topic, err)
	}
	from := map[int32]int64{}
	starts.Each(func(o kadm.ListedOffset) { from[o.Partition] = o.Offset })
	ends, err := brewkit.EndOffsets(ctx, adm, topic)
	if err != nil {
		return "", "", err
	}
	prefix := `["` + name + `",`
	err = brewkit.ReadTo(ctx, cfg, topic, from, ends, 30*time.Second, func(r *kgo.Record) {
		if strings.HasPrefix(string(r.Key), prefix) && r.Value != nil {
			key, value = string(r.Key), string(r.Value)
		}
	})
	if err == nil && key == "" {
		err = fmt.Errorf("no record of connector %s in %s", name, topic)
	}
	return key, value, err
}

// HeaderNames are r's header names, in order.
func (r Record) HeaderNames() []string {
	var out []string
	for _, h := range r.Headers {
		out = append(out, h[0])
	}
	return slices.Clip(out)
}

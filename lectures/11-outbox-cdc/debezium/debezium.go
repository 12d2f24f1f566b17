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
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
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
	c := o.Connect
	cl, adm, err := drill.Kafka(ctx, cfg, brewkit.TopicNamed(o.Topic, 6))
	if err != nil {
		return res, err
	}
	defer cl.Close()
	if err := o.workerReady(ctx); err != nil {
		return res, err
	}
	p, err := db.Connect(ctx)
	if err != nil {
		return res, err
	}
	defer p.Close()
	if err := capture(ctx, p, o); err != nil {
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
	from, err := drill.Start(ctx, adm, o.Topic)
	if err != nil {
		return res, err
	}
	tail, err := cdc.StartTail(ctx, cfg, o.Topic, from, o.Run)
	if err != nil {
		return res, err
	}
	defer tail.Close()

	if res.Registered, err = register(ctx, o); err != nil {
		return res, err
	}
	orders, err := startOrders(ctx, p, o)
	if err != nil {
		return res, err
	}
	var killedAt time.Time
	if o.KillAt >= 0 && o.KillAt < o.Orders {
		if killedAt, err = killWorker(ctx, o, orders.committed, &res); err != nil {
			return res, err
		}
	}
	written, beforeLast, err := orders.wait()
	if err != nil {
		return res, err
	}
	res.Written = len(written)
	if err := tail.Wait(ctx, len(written), 2*time.Minute); err != nil {
		return res, err
	}
	o.say("all %d orders in %s", len(written), o.Topic)
	res.tally(written, tail.Events(), killedAt)

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
	res.SlotDropped = err == nil && !st.Exists
	return res, err
}

// workerReady checks, when the demo is to kill the worker, that it can.
func (o Options) workerReady(ctx context.Context) error {
	if o.KillAt < 0 {
		return nil
	}
	if o.Worker == nil {
		return errors.New("a worker kill (-kill-at) needs the worker's control (Options.Worker)")
	}
	return o.Worker.Ready(ctx)
}

// capture starts from nothing: no connector of the name, no slot or
// publication, an empty schema; then the publication and the slot the
// connector reads.
func capture(ctx context.Context, p *pgxpool.Pool, o Options) error {
	if err := o.Connect.Remove(ctx, o.Connector); err != nil {
		return err
	}
	if err := cdc.Release(ctx, p, o.Publication, o.Slot); err != nil {
		return err
	}
	if err := db.ResetSchema(ctx, p, o.Schema, cdc.DDL...); err != nil {
		return err
	}
	return cdc.Capture(ctx, p, o.Schema, o.Publication, o.Slot)
}

// register PUTs the connector's config and waits for its task to run; it
// returns how long that took.
func register(ctx context.Context, o Options) (time.Duration, error) {
	config, err := ConnectorConfig(o.Connector, o.Schema, o.Slot, o.Publication, o.Topic)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := o.Connect.Put(ctx, o.Connector, config); err != nil {
		return 0, err
	}
	if err := o.Connect.WaitRunning(ctx, o.Connector, 60*time.Second); err != nil {
		return 0, err
	}
	took := time.Since(start)
	o.say("connector %s registered on %s, running in %s", o.Connector, o.Connect.Host(), took.Round(time.Millisecond))
	return took, nil
}

// killWorker waits until KillAt committed, kills the worker -9, starts it
// again and waits for the connector's task to run; it returns when the
// worker was gone.
func killWorker(ctx context.Context, o Options, committed <-chan int, res *Result) (time.Time, error) {
	reached := false
	for n := range committed {
		if n >= o.KillAt {
			reached = true
			break
		}
	}
	if !reached {
		return time.Time{}, nil // order-service stopped first: its wait says why
	}
	res.KilledAfter = brewkit.OrderID(int64(o.KillAt))
	var err error
	if res.Killed, err = o.Worker.Kill(ctx); err != nil {
		return time.Time{}, err
	}
	// The clock starts once the worker is gone, not when the kill was
	// asked for: until its process has ended it may still send orders
	// committed meanwhile, and finding its pid takes a moment.
	killedAt := time.Now()
	o.say("worker killed -9 (%s) after %s committed; order-service goes on writing", res.Killed, res.KilledAfter)
	if err := o.Worker.Start(ctx); err != nil {
		return killedAt, err
	}
	res.WorkerBack = time.Since(killedAt)
	// The status says RUNNING at once (the status topic's last word, by
	// the worker that died); the task runs again once the group let the
	// dead member go. A task that failed shows here.
	if err := o.Connect.WaitRunning(ctx, o.Connector, 2*time.Minute); err != nil {
		return killedAt, err
	}
	o.say("worker back in %s; waiting for its records", res.WorkerBack.Round(100*time.Millisecond))
	return killedAt, nil
}

func recordOf(r *kgo.Record) Record {
	out := Record{Topic: r.Topic, Key: string(r.Key), Value: string(r.Value)}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, [2]string{h.Key, string(h.Value)})
	}
	return out
}

// waitOffsets waits (at most 30 s) until the connector's stored offset is
// past lsn: its "lsn" is the position of the last change it sent. Connect
// stores a connector's position every offset.flush.interval.ms (1 s on the
// stand).
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

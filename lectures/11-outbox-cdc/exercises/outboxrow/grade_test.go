package outboxrow

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/outbox"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

// The grader's faults, by order: what its triggers do to that order's
// INSERTs.
const (
	refuseOrder = "order" // the order's INSERT fails (a constraint)
	refuseEvent = "event" // the outbox row's INSERT fails
	stallEvent  = "stall" // the outbox row's INSERT waits until the caller's context ends
	cutEvent    = "cut"   // the connection dies during the outbox row's INSERT
)

var faults = map[int]string{3: refuseEvent, 6: refuseOrder, 9: cutEvent, 12: stallEvent, 15: refuseEvent, 18: refuseOrder}

// why says what happened to an order with fault f, and what to do.
var why = map[string][2]string{
	refuseOrder: {"PostgreSQL refused the order's INSERT", "return the error of each INSERT and of the commit: pgx.BeginFunc returns them"},
	refuseEvent: {"PostgreSQL refused its outbox row", "return the error of each INSERT and of the commit: pgx.BeginFunc returns them"},
	stallEvent:  {"its context ended while the outbox row's INSERT waited", "pass ctx to every call: the caller gave up, so the order is not placed"},
	cutEvent:    {"the connection died during the outbox row's INSERT", "return the error of each INSERT and of the commit: pgx.BeginFunc returns them"},
}

const oneTx = "one transaction for both INSERTs: pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error { both on tx }); a statement on the pool is a transaction of its own, committed at once"

var faultDDL = []string{
	`CREATE TABLE grader_faults (order_id text PRIMARY KEY, fault text NOT NULL)`,
	`CREATE FUNCTION grader_order() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF EXISTS (SELECT 1 FROM grader_faults WHERE order_id = NEW.order_id AND fault = 'order') THEN
			RAISE EXCEPTION 'the grader refuses order % (a constraint of orders)', NEW.order_id;
		END IF;
		RETURN NEW;
	END $$`,
	`CREATE FUNCTION grader_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
	DECLARE f text;
	BEGIN
		SELECT fault INTO f FROM grader_faults WHERE order_id = NEW.aggregate_id;
		IF f = 'event' THEN
			RAISE EXCEPTION 'the grader refuses the outbox row of %', NEW.aggregate_id;
		ELSIF f = 'stall' THEN
			PERFORM pg_sleep(10);
		ELSIF f = 'cut' THEN
			PERFORM pg_terminate_backend(pg_backend_pid());
		END IF;
		RETURN NEW;
	END $$`,
	`CREATE TRIGGER grader BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION grader_order()`,
	`CREATE TRIGGER grader BEFORE INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION grader_outbox()`,
}

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// order-service's schema of its own, with the grader's triggers.
	pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
	admin, err := db.Connect(pctx)
	pcancel()
	if err != nil {
		grade.Fail(t, "start it: `make services` in lectures/11-outbox-cdc (`scripts/brewstand services up postgres` at the root), then check again",
			"this exercise is graded on PostgreSQL, and it does not answer: %v", err)
	}
	defer admin.Close()
	schema := fmt.Sprintf("ex_outboxrow_%06d", rand.IntN(1_000_000))
	if err := db.ResetSchema(ctx, admin, schema, append(slices.Clone(outbox.DDL), faultDDL...)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE") //nolint:errcheck // best effort
	})
	for n, f := range faults {
		if _, err := admin.Exec(ctx, "INSERT INTO "+pgx.Identifier{schema, "grader_faults"}.Sanitize()+" VALUES ($1, $2)", brewkit.OrderID(int64(n)), f); err != nil {
			t.Fatal(err)
		}
	}
	p, err := db.ConnectIn(ctx, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	// 20 orders, each with its own deadline.
	run := fmt.Sprintf("ex-outboxrow-%d", time.Now().UnixNano())
	placed := map[string]brewkit.Event{}
	for n := range 20 {
		ev := drill.Order(11, run, n)
		limit := 5 * time.Second
		if faults[n] == stallEvent {
			limit = time.Second
		}
		octx, ocancel := context.WithTimeout(ctx, limit)
		err := PlaceOrder(octx, p, ev)
		ocancel()
		f, faulty := faults[n]
		switch {
		case !faulty && err != nil:
			grade.Fail(t, "write both rows with the columns of outbox.DDL, in p's schema, and commit",
				"PlaceOrder(%s) failed: %v", ev.OrderID, err)
		case faulty && err == nil:
			grade.Fail(t, why[f][1], "PlaceOrder(%s) returned nil, though %s: order-service tells the customer the order is placed", ev.OrderID, why[f][0])
		case !faulty:
			placed[ev.OrderID] = ev
		}
	}

	// What the tables hold.
	orders := ids(t, ctx, admin, "SELECT order_id FROM "+pgx.Identifier{schema, "orders"}.Sanitize())
	events := ids(t, ctx, admin, "SELECT aggregate_id FROM "+pgx.Identifier{schema, "outbox"}.Sanitize())
	for _, id := range orders {
		if !slices.Contains(events, id) {
			grade.Fail(t, oneTx, "%s is in orders with no outbox row (%s): an order the kitchen never hears of", id, why[faults[seq(id)]][0])
		}
	}
	for _, id := range events {
		if !slices.Contains(orders, id) {
			grade.Fail(t, oneTx, "%s has an outbox row and no order (%s): the kitchen cooks an order that does not exist", id, why[faults[seq(id)]][0])
		}
	}
	for id := range placed {
		if !slices.Contains(orders, id) {
			grade.Fail(t, "INSERT the order into orders and its event into outbox, then commit", "PlaceOrder(%s) returned nil, and the order is not in orders", id)
		}
		if n := count(events, id); n != 1 {
			grade.Fail(t, "one outbox row per order: its OrderPlaced event", "%s has %d outbox rows", id, n)
		}
	}
	for n, f := range faults {
		if id := brewkit.OrderID(int64(n)); slices.Contains(orders, id) {
			grade.Fail(t, why[f][1], "%s is in orders, though %s", id, why[f][0])
		}
	}

	// The relay publishes the outbox; the topic must hold each placed order's event, once.
	topic := env.FreshTopic(t, "ex-outboxrow", 3)
	if _, err := outbox.RunRelay(ctx, env.Config, outbox.Relay{Schema: schema, Topic: topic, Batch: 10, UntilEmpty: true}); err != nil {
		t.Fatalf("relaying the outbox: %v", err)
	}
	end, err := brewkit.EndOffsets(ctx, env.Admin(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	if err := brewkit.ReadTo(ctx, env.Config, topic, nil, end, 30*time.Second, func(r *kgo.Record) { recs = append(recs, r) }); err != nil {
		t.Fatalf("reading the events back: %v", err)
	}
	seen := map[string]int{}
	for _, r := range recs {
		got, err := brewkit.DecodeEvent(r)
		if err != nil {
			grade.Fail(t, "payload is the event's JSON: json.Marshal(ev), as every Brew service reads it", "the event with key %q does not decode: %v", r.Key, err)
		}
		want, ok := placed[got.OrderID]
		if !ok {
			grade.Fail(t, oneTx, "an event of %s reached Kafka, and the order was not placed", got.OrderID)
		}
		if string(r.Key) != got.OrderID {
			grade.Fail(t, "aggregate_id is the order id: the relay makes it the record's key, so all of an order's events share a partition",
				"the event of %s has key %q", got.OrderID, r.Key)
		}
		if typ := header(r, "type"); typ != string(brewkit.OrderPlaced) {
			grade.Fail(t, "type is the event's type: string(ev.Type)", "the event of %s has type %q, want %q", got.OrderID, typ, brewkit.OrderPlaced)
		}
		if got.ShopID != want.ShopID || got.Cents != want.Cents || !slices.Equal(got.Items, want.Items) || got.Run != want.Run {
			grade.Fail(t, "payload is the event's JSON: json.Marshal(ev)", "the event of %s is %+v, the order was %+v", got.OrderID, got, want)
		}
		seen[got.OrderID]++
	}
	for id := range placed {
		if seen[id] != 1 {
			grade.Fail(t, oneTx, "%s: %d events in Kafka, want 1", id, seen[id])
		}
	}
	t.Logf("%d orders placed, %d refused by the grader's faults, each placed order's event in Kafka once", len(placed), len(faults))
}

func ids(t *testing.T, ctx context.Context, p interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, q string) []string {
	t.Helper()
	rows, err := p.Query(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func count(ids []string, id string) int {
	n := 0
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}

// seq is the number of order id ord-NNNNNNN.
func seq(id string) int {
	var n int
	fmt.Sscanf(id, "ord-%d", &n) //nolint:errcheck // the grader's own ids
	return n
}

func header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

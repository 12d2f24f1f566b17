package inboxdedup

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/inbox"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const consumer = "kitchen-1"

const (
	inboxHint  = "claim the event id in the same transaction as the ticket, before it: INSERT INTO inbox (consumer, event_id) ... ON CONFLICT DO NOTHING, and no ticket when it inserted no row"
	commitHint = "commit the offsets after the database commit, with the batch's records: cl.CommitRecords(ctx, recs...)"
)

// The grader's triggers on tickets: for the orders in grader_faults, the
// first ticket fails (a deadlock, a failover: the transaction is rolled
// back), or every ticket takes 300 ms (two kitchens overlap).
var faultDDL = []string{
	`CREATE TABLE grader_faults (order_id text PRIMARY KEY, fault text NOT NULL)`,
	`CREATE SEQUENCE grader_failed`,
	`CREATE FUNCTION grader_ticket() RETURNS trigger LANGUAGE plpgsql AS $$
	DECLARE f text;
	BEGIN
		SELECT fault INTO f FROM grader_faults WHERE order_id = NEW.order_id;
		IF f = 'fail-once' THEN -- nested: AND may evaluate both sides
			IF nextval('grader_failed') = 1 THEN
				RAISE EXCEPTION 'the grader fails the ticket of % once (as a deadlock or a failover would)', NEW.order_id;
			END IF;
		ELSIF f = 'slow' THEN
			PERFORM pg_sleep(0.3);
		END IF;
		RETURN NEW;
	END $$`,
	`CREATE TRIGGER grader BEFORE INSERT ON tickets FOR EACH ROW EXECUTE FUNCTION grader_ticket()`,
}

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
	admin, err := db.Connect(pctx)
	pcancel()
	if err != nil {
		grade.Fail(t, "start it: `make services` in lectures/11-outbox-cdc (`scripts/brewstand services up postgres` at the root), then check again",
			"this exercise is graded on PostgreSQL, and it does not answer: %v", err)
	}
	defer admin.Close()
	schema := fmt.Sprintf("ex_inboxdedup_%06d", mrand.IntN(1_000_000))
	if err := db.ResetSchema(ctx, admin, schema, append(slices.Clone(inbox.DDL), faultDDL...)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE") //nolint:errcheck // best effort
	})
	p, err := db.ConnectIn(ctx, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	g := &grader{t: t, env: env, p: p, admin: admin, schema: schema, run: fmt.Sprintf("ex-inboxdedup-%d", time.Now().UnixNano())}

	// 1. 30 orders, 6 of them sent twice by the outbox; the kitchen
	// crashes after three batches, its offsets never committed (it reads
	// everything again).
	k := g.kitchen(ctx, "redelivery", g.orders(0, 30, 6))
	batches := 0
	k.cook(ctx, func(err error) bool {
		if err != nil {
			grade.Fail(t, "return an error only when the batch was not cooked", "Cook failed: %v", err)
		}
		if batches++; batches == 3 {
			k.crash(ctx) // after the database commit, before the offsets
		}
		return false
	})
	g.cookedOnce(ctx, k, "the outbox sent 6 events twice, and the kitchen crashed after three batches and read them again", inboxHint)
	k.committedToEnd(ctx)

	// 2. Two kitchens cook the same batch at once: a rebalance's old owner
	// of a partition still cooking what the new owner just got.
	k = g.kitchen(ctx, "twice-at-once", g.orders(100, 105, 0))
	g.fault(ctx, 100, 105, "slow")
	recs := k.pollAll(ctx)
	errs := make([]error, 2)
	var both sync.WaitGroup
	for i := range errs {
		both.Go(func() { errs[i] = Cook(ctx, p, k.cl, consumer, recs) })
	}
	both.Wait()
	for _, err := range errs {
		if err != nil { // it comes again, as a retry or a redelivery would bring it
			if err := Cook(ctx, p, k.cl, consumer, recs); err != nil {
				grade.Fail(t, inboxHint, "two kitchens cooked one batch at once; the one that failed (%v) failed again alone: %v", errs, err)
			}
		}
	}
	g.cookedOnce(ctx, k, "two kitchens cooked the same batch at once (each of its tickets takes 300 ms)",
		"a SELECT in the inbox does not see the other kitchen's id until it commits, nor waits for it; the INSERT ... ON CONFLICT DO NOTHING waits, and then inserts nothing: "+inboxHint)
	k.stop()

	// 3. A ticket's transaction fails once; kitchen-service restarts from
	// its committed offsets.
	k = g.kitchen(ctx, "failure", g.orders(200, 212, 0))
	g.fault(ctx, 205, 206, "fail-once")
	failures := 0
	k.cook(ctx, func(err error) bool {
		if err == nil {
			return false
		}
		if failures++; failures > 1 {
			grade.Fail(t, "return an error only when the batch was not cooked", "Cook failed again: %v", err)
		}
		t.Logf("Cook failed as the grader made it (%v); the kitchen restarts from its committed offsets", err)
		return true
	})
	if failures == 0 {
		grade.Fail(t, "return the error of the transaction: the batch was not cooked, and kitchen-service must not go on as if it were",
			"Cook returned nil for the batch whose ticket of %s PostgreSQL refused", brewkit.OrderID(205))
	}
	g.cookedOnce(ctx, k, "a ticket's transaction failed once and the kitchen restarted from its committed offsets",
		"a batch whose transaction failed must come again: "+commitHint)
	k.committedToEnd(ctx)
}

type grader struct {
	t           *testing.T
	env         *brewtest.Env
	p, admin    *pgxpool.Pool
	schema, run string
}

// sent is one event the grader wrote: its order and its event id.
type sent struct {
	ev brewkit.Event
	id string
}

// orders are events of orders from..to-1, and the first dup of them again.
func (g *grader) orders(from, to, dup int) []sent {
	var out []sent
	for n := from; n < to; n++ {
		out = append(out, sent{drill.Order(5, g.run, n), uuid()})
	}
	return append(out, out[:dup]...)
}

func (g *grader) fault(ctx context.Context, from, to int, f string) {
	for n := from; n < to; n++ {
		if _, err := g.admin.Exec(ctx, "INSERT INTO "+pgx.Identifier{g.schema, "grader_faults"}.Sanitize()+" VALUES ($1, $2)", brewkit.OrderID(int64(n)), f); err != nil {
			g.t.Fatal(err)
		}
	}
}

// kitchen writes the events to a topic of their own and returns
// kitchen-service, started in a group of its own.
func (g *grader) kitchen(ctx context.Context, name string, events []sent) *kitchen {
	t := g.t
	topic := g.env.FreshTopic(t, "ex-inboxdedup-"+name, 3)
	var recs []*kgo.Record
	for _, s := range events {
		r := s.ev.Record(topic)
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: drill.HeaderEventID, Value: []byte(s.id)})
		recs = append(recs, r)
	}
	if err := g.env.Client(t).ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("writing the events: %v", err)
	}
	adm := g.env.Admin(t)
	ends, err := brewkit.EndOffsets(ctx, adm, topic)
	if err != nil {
		t.Fatal(err)
	}
	k := &kitchen{g: g, topic: topic, group: topic, events: events, adm: adm, ends: map[int32]int64{}}
	ends.Each(func(o kadm.ListedOffset) { k.ends[o.Partition] = o.Offset })
	k.start()
	return k
}

// kitchen is kitchen-service: a consumer of its topic in its group that
// hands each poll (5 records at most) to Cook.
type kitchen struct {
	g            *grader
	topic, group string
	events       []sent
	adm          *kadm.Client
	ends         map[int32]int64
	cl           *kgo.Client
	cooked       map[int32]int64 // the end of what Cook cooked without an error, by partition
}

func (k *kitchen) start() {
	cl, err := brewkit.NewClient(k.g.env.Config, kgo.ConsumerGroup(k.group), kgo.ConsumeTopics(k.topic),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.KeepRetryableFetchErrors())
	if err != nil {
		k.g.t.Fatal(err)
	}
	k.cl = cl
	if k.cooked == nil {
		k.cooked = map[int32]int64{}
	}
}

func (k *kitchen) stop() { k.cl.Close() }

// crash stops the kitchen and sets its group's offsets back to the start,
// as if none of its offset commits had happened, and starts it again.
func (k *kitchen) crash(ctx context.Context) {
	k.stop()
	start := kadm.Offsets{}
	for part := range k.ends {
		start.AddOffset(k.topic, part, 0, -1)
	}
	err := brewkit.WaitFor(ctx, 30*time.Second, 100*time.Millisecond, func() bool {
		resp, err := k.adm.CommitOffsets(ctx, k.group, start)
		return err == nil && resp.Error() == nil // the group is empty once the stopped member left
	})
	if err != nil {
		k.g.t.Fatalf("setting group %s back to the start: %v", k.group, err)
	}
	k.cooked = map[int32]int64{}
	k.start()
}

// poll returns the next records, up to 5; none once limit passes.
func (k *kitchen) poll(ctx context.Context, limit time.Duration) []*kgo.Record {
	pctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var fc brewkit.FetchCheck
	for pctx.Err() == nil {
		fs, err := fc.Poll(pctx, k.cl, 5)
		if err != nil {
			k.g.t.Fatalf("polling %s: %v", k.topic, err)
		}
		if recs := fs.Records(); len(recs) > 0 {
			return recs
		}
	}
	return nil
}

// pollAll polls until it has every record of the topic.
func (k *kitchen) pollAll(ctx context.Context) []*kgo.Record {
	var all []*kgo.Record
	for len(all) < len(k.events) {
		recs := k.poll(ctx, 30*time.Second)
		if recs == nil {
			k.g.t.Fatalf("%d of %d records of %s read within 30s", len(all), len(k.events), k.topic)
		}
		all = append(all, recs...)
	}
	return all
}

// cook hands each poll to Cook until nothing is left to cook: every
// partition cooked to its end, or committed to it (nothing will come
// again). after gets Cook's error; true restarts the kitchen from its
// group's committed offsets. It stops the kitchen at the end.
func (k *kitchen) cook(ctx context.Context, after func(error) bool) {
	t := k.g.t
	defer func() { k.stop() }()
	deadline := time.Now().Add(90 * time.Second)
	for !k.done(ctx) {
		if time.Now().After(deadline) {
			t.Fatalf("the kitchen still had records of %s to cook after 90s", k.topic)
		}
		recs := k.poll(ctx, 2*time.Second)
		if recs == nil {
			continue
		}
		err := Cook(ctx, k.g.p, k.cl, consumer, recs)
		if err == nil {
			for _, r := range recs {
				k.cooked[r.Partition] = max(k.cooked[r.Partition], r.Offset+1)
			}
		}
		if after(err) {
			k.stop()
			k.start()
		}
	}
}

func (k *kitchen) done(ctx context.Context) bool {
	committed := k.committed(ctx)
	for part, end := range k.ends {
		c, _ := committed.Lookup(k.topic, part)
		if end > 0 && k.cooked[part] < end && c.At < end {
			return false
		}
	}
	return true
}

// committed are the group's committed offsets (none before its first commit).
func (k *kitchen) committed(ctx context.Context) kadm.OffsetResponses {
	committed, err := k.adm.FetchOffsets(ctx, k.group)
	if errors.Is(err, kerr.GroupIDNotFound) { // the simulation, before the group's first commit
		return kadm.OffsetResponses{}
	}
	if err != nil {
		k.g.t.Fatalf("the offsets of group %s: %v", k.group, err)
	}
	return committed
}

// committedToEnd fails unless the group's offsets reached the topic's end.
func (k *kitchen) committedToEnd(ctx context.Context) {
	committed := k.committed(ctx)
	for part, end := range k.ends {
		if c, _ := committed.Lookup(k.topic, part); end > 0 && c.At != end {
			grade.Fail(k.g.t, commitHint, "every batch was cooked, and the group's committed offset of partition %d is %d, not its end %d: a restarted kitchen reads it all again", part, c.At, end)
		}
	}
}

// cookedOnce fails unless each of the kitchen's orders has exactly one ticket.
func (g *grader) cookedOnce(ctx context.Context, k *kitchen, what, hint string) {
	rows, err := g.admin.Query(ctx, "SELECT order_id, count(*) FROM "+pgx.Identifier{g.schema, "tickets"}.Sanitize()+" WHERE kitchen = $1 GROUP BY order_id", consumer)
	if err != nil {
		g.t.Fatal(err)
	}
	tickets := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			g.t.Fatal(err)
		}
		tickets[id] = n
	}
	if err := rows.Err(); err != nil {
		g.t.Fatal(err)
	}
	for _, s := range k.events {
		switch n := tickets[s.ev.OrderID]; {
		case n == 0:
			grade.Fail(g.t, hint, "%s was never cooked (%s)", s.ev.OrderID, what)
		case n > 1:
			grade.Fail(g.t, hint, "%s was cooked %d times (%s)", s.ev.OrderID, n, what)
		}
	}
	g.t.Logf("%s: each of %d orders cooked once", what, len(tickets))
}

func uuid() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(errors.New("no randomness"))
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

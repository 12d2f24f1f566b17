package cdc_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/cdc"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db/dbtest"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// slotFor is a slot and publication name of the test's own, dropped when
// it ends.
func slotFor(t *testing.T, prefix string) string {
	name := fmt.Sprintf("t_%s_%06d", prefix, rand.IntN(1_000_000))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		p, err := db.Connect(ctx)
		if err != nil {
			return
		}
		defer p.Close()
		if err := cdc.Release(ctx, p, name, name); err != nil {
			t.Errorf("dropping slot %s: %v", name, err)
		}
	})
	return name
}

// Readers killed -9 at seeded orders while order-service writes, half of
// them after Kafka acknowledged an order and before the slot was told: no
// committed order is lost, each kill after Kafka's ack sends its order again
// (a duplicate the consumer removes by event id), first deliveries keep the
// commit order in each partition. With no reader, the slot's lag grows with
// every order written and comes back down once a reader caught up;
// PostgreSQL refuses to drop the slot while a reader streams from it
// (55006) and drops it once the reader stopped.
func TestReaderKilledLosesNothingReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	o := cdc.Defaults // the README's run
	o.Schema = dbtest.Schema(t, "cdc")
	o.Slot = slotFor(t, "cdc")
	o.Publication = o.Slot
	o.Topic = env.FreshTopic(t, "cdc", 6)
	o.Run = fmt.Sprintf("cdc-test-%d", time.Now().UnixNano())
	o.Command = []string{brewtest.BuildCmdAt(t, "../cmd/cdc"), "reader"}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := cdc.Run(ctx, env.Config, o)
	require.NoError(t, err)

	require.Len(t, r.Killed, o.Kills, "every planned kill fired")
	acked := 0
	for _, k := range r.Killed {
		if k.Stage == cdc.KillAcked {
			acked++
		}
	}
	require.Equal(t, 2, acked, "5 kills, received and kafka-acked in turn")
	require.Equal(t, o.Orders+o.Down, r.Written)
	require.Empty(t, r.Lost, "every committed order reaches Kafka")
	require.Equal(t, r.Written, r.Unique)
	require.GreaterOrEqual(t, r.Duplicates, acked, "an order Kafka acknowledged and the slot did not is sent again")
	require.Equal(t, r.Written+r.Duplicates, r.Events)
	require.Zero(t, r.OutOfOrder, "first deliveries in commit order within each partition")

	require.Len(t, r.LagDown, 4)
	prev := r.LagStopped.Lag
	for _, l := range r.LagDown {
		require.Greater(t, l.Lag, prev, "the slot holds every order's WAL while no reader runs (%d orders)", l.Written)
		require.Equal(t, "reserved", l.WALStatus, "well below max_wal_size")
		prev = l.Lag
	}
	down := r.LagDown[len(r.LagDown)-1].Lag
	require.Greater(t, down, int64(o.Down)*200, "at least 200 bytes of WAL per order (two rows, an index entry, a commit)")
	require.Less(t, r.LagAfter, down/10, "released once the reader caught up")
	require.Contains(t, r.DropWhileActive, "55006", "a slot in use is not dropped")
	require.True(t, r.DroppedAfter)

	var b strings.Builder
	cdc.Print(&b, o, r)
	t.Log("\n" + b.String())
	out := strings.NewReplacer(o.Topic, cdc.Defaults.Topic, o.Slot, cdc.Defaults.Slot, o.Schema+".", cdc.Defaults.Schema+".").Replace(b.String())
	brewtest.MatchesReadme(t, "../README.md", "cdc", out)
}

// A reader acknowledges up to the end of the WAL it was sent when it is
// idle, not only its own transactions: order-service's other tables (not
// in the publication) written while it runs do not pile up behind its slot.
func TestIdleReaderReleasesOtherTablesWAL(t *testing.T) {
	env := brewtest.Cluster(t)
	schema := dbtest.Schema(t, "cdc_idle")
	slot := slotFor(t, "cdc_idle")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := db.Connect(ctx)
	require.NoError(t, err)
	defer p.Close()
	require.NoError(t, db.ResetSchema(ctx, p, schema, append(cdc.DDL, "CREATE TABLE audit (n int, note text)")...))
	require.NoError(t, cdc.Capture(ctx, p, schema, slot, slot))

	r := cdc.ReaderDefaults
	r.Slot, r.Publication, r.Topic = slot, slot, env.FreshTopic(t, "cdc-idle", 1)
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Stream(rctx, env.Config) }()
	_, err = p.Exec(ctx, "INSERT INTO "+pgx.Identifier{schema, "audit"}.Sanitize()+" SELECT n, repeat('x', 200) FROM generate_series(1, 5000) n")
	require.NoError(t, err)
	lsn, err := cdc.CurrentLSN(ctx, p)
	require.NoError(t, err)
	st, err := cdc.Slot(ctx, p, slot)
	require.NoError(t, err)
	t.Logf("slot lag after 5000 rows of another table: %d bytes", st.Lag)
	brewtest.Eventually(t, 20*time.Second, "the slot moves past WAL it has no change of", func() (bool, string) {
		ok, err := cdc.CaughtUp(ctx, p, slot, lsn)
		st, _ := cdc.Slot(ctx, p, slot)
		return ok && err == nil, fmt.Sprintf("confirmed %s, want %s (%v)", st.Confirmed, lsn, err)
	})
	stop()
	require.NoError(t, <-done, "a stopped reader returns nil")
}

// Every order of a run read back once the reader stopped on its own
// (SIGTERM): what it produced is acknowledged, so a second reader on the
// same slot sends nothing again.
func TestStoppedReaderLeavesNothingToResend(t *testing.T) {
	env := brewtest.Cluster(t)
	schema := dbtest.Schema(t, "cdc_stop")
	slot := slotFor(t, "cdc_stop")
	topic := env.FreshTopic(t, "cdc-stop", 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := db.Connect(ctx)
	require.NoError(t, err)
	defer p.Close()
	require.NoError(t, db.ResetSchema(ctx, p, schema, cdc.DDL...))
	require.NoError(t, cdc.Capture(ctx, p, schema, slot, slot))
	app, err := db.ConnectIn(ctx, schema)
	require.NoError(t, err)
	defer app.Close()
	run := fmt.Sprintf("cdc-stop-%d", time.Now().UnixNano())
	written, err := cdc.Write(ctx, app, cdc.Writes{Schema: schema, Run: run, Seed: 1, To: 50})
	require.NoError(t, err)

	adm := env.Admin(t)
	from, err := drill.Start(ctx, adm, topic)
	require.NoError(t, err)
	// Each reader streams until it acknowledged one more order, written once
	// it streams: the second one sends that order and nothing before it.
	next := len(written)
	stream := func() {
		r := cdc.ReaderDefaults
		r.Slot, r.Publication, r.Topic = slot, slot, topic
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- r.Stream(rctx, env.Config) }()
		brewtest.Eventually(t, 20*time.Second, "the reader streams from the slot", func() (bool, string) {
			st, err := cdc.Slot(ctx, p, slot)
			return st.Active, fmt.Sprint(err)
		})
		more, err := cdc.Write(ctx, app, cdc.Writes{Schema: schema, Run: run, Seed: 1, From: next, To: next + 1})
		require.NoError(t, err)
		written = append(written, more...)
		next++
		lsn, err := cdc.CurrentLSN(ctx, p)
		require.NoError(t, err)
		brewtest.Eventually(t, 20*time.Second, "the reader acknowledges what was written", func() (bool, string) {
			ok, err := cdc.CaughtUp(ctx, p, slot, lsn)
			return ok && err == nil, fmt.Sprint(err)
		})
		stop()
		require.NoError(t, <-done)
		brewtest.Eventually(t, 10*time.Second, "the slot is let go", func() (bool, string) {
			st, err := cdc.Slot(ctx, p, slot)
			return !st.Active, fmt.Sprint(err)
		})
	}
	stream()
	stream()
	got, err := drill.Read(ctx, env.Config, adm, topic, from, run)
	require.NoError(t, err)
	require.Len(t, got, len(written), "each order once, though two readers ran")
	count := drill.Count(got)
	for _, w := range written {
		require.Equal(t, 1, count[w.OrderID], w.OrderID)
	}
	ids := map[string]bool{}
	for _, g := range got {
		ids[g.ID] = true
	}
	for _, w := range written {
		require.True(t, ids[w.EventID], "the event-id header is the outbox row's id (%s)", w.OrderID)
	}
}

func TestParseKill(t *testing.T) {
	k, err := cdc.ParseKill("kafka-acked@12")
	require.NoError(t, err)
	require.Equal(t, cdc.Kill{Stage: cdc.KillAcked, Seq: 12}, k)
	k, err = cdc.ParseKill("")
	require.NoError(t, err)
	require.Equal(t, int64(-1), k.Seq)
	for _, bad := range []string{"acked@1", "received", "received@x"} {
		_, err := cdc.ParseKill(bad)
		require.Error(t, err, bad)
	}
}

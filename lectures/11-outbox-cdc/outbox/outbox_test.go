package outbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db/dbtest"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/outbox"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// order-service and two relays at once, killed -9 at every step: every
// committed order reaches Kafka, no event of an order that was not
// committed does, nothing stays in the outbox, and the only duplicates are
// the batches of relays killed after Kafka's ack and before their DELETE
// committed, a full batch each.
func TestOutboxLosesNothingUnderKillsReadme(t *testing.T) {
	schema := dbtest.Schema(t, "outbox") // first: without PostgreSQL the test skips before it starts a cluster
	env := brewtest.Cluster(t)
	o := outbox.Defaults // the README's run
	o.Schema = schema
	o.Topic = env.FreshTopic(t, "outbox", 6)
	o.Run = "outbox-test"
	o.Command = []string{brewtest.BuildCmdAt(t, "../cmd/outbox")}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := outbox.Run(ctx, env.Config, o)
	require.NoError(t, err)

	require.Len(t, r.Kills, o.WriterKills+o.RelayKills, "every planned kill fired")
	require.Equal(t, o.Orders-o.WriterKills, r.Rows, "an order killed inside its transaction is not there")
	require.Zero(t, r.Lost, "orders with no event: %v", r.LostIDs)
	require.Zero(t, r.Invented, "events of orders never committed: %v", r.InventedIDs)
	require.Zero(t, r.Outbox, "the relays emptied the outbox")
	require.Equal(t, r.Rows, r.Distinct, "one event id per committed order")
	resending := 0
	for _, k := range r.Kills {
		if k.Stage.Resends() {
			resending++
			require.Equal(t, o.Batch, k.Resent, "a relay killed at %s had a full batch in flight", k.Stage)
		} else {
			require.Zero(t, k.Resent, k.Stage)
		}
	}
	require.Equal(t, 4, resending, "6 relay kills: locked, acked, deleted in turn")
	require.Equal(t, r.Resent, r.Duplicates, "duplicates come only from the batches sent again")
	sent := 0
	for _, n := range r.SentBy {
		sent += n
	}
	require.Equal(t, r.Rows, sent, "each row deleted once, by one relay")

	var b strings.Builder
	outbox.Print(&b, o, r)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "outbox", strings.ReplaceAll(b.String(), o.Topic, outbox.Defaults.Topic))
}

// FOR UPDATE SKIP LOCKED gives a second relay the next rows while the first
// holds its batch, and the rows of a relay that died (its transaction
// rolled back) go to the next relay whole; without the lock both relays
// take the same rows.
func TestSkipLockedGivesTwoRelaysDifferentRows(t *testing.T) {
	schema := dbtest.Schema(t, "skip_locked")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := db.Connect(ctx)
	require.NoError(t, err)
	defer admin.Close()
	require.NoError(t, db.ResetSchema(ctx, admin, schema, outbox.DDL...))
	p, err := db.ConnectIn(ctx, schema)
	require.NoError(t, err)
	t.Cleanup(p.Close) // after the transactions' rollbacks below, even on a failure

	for n := range 30 {
		require.NoError(t, pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error {
			return outbox.PlaceOrder(ctx, tx, drill.Order(1, "skip", n), nil)
		}))
	}
	ids := func(rows []outbox.Row) []int64 {
		var out []int64
		for _, r := range rows {
			out = append(out, r.ID)
		}
		return out
	}
	lock := func(noLock bool) (pgx.Tx, []int64) {
		tx, err := p.Begin(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { tx.Rollback(context.Background()) }) //nolint:errcheck // done already, or the test failed
		rows, err := outbox.LockBatch(ctx, tx, 10, noLock)
		require.NoError(t, err)
		require.Len(t, rows, 10)
		return tx, ids(rows)
	}
	tx1, first := lock(false)
	tx2, second := lock(false)
	require.NotContains(t, second, first[0])
	require.Greater(t, second[0], first[9], "the second relay takes the next ten rows")
	tx0, third := lock(true)
	require.Equal(t, first, third, "without FOR UPDATE SKIP LOCKED a relay takes the rows another one is sending")
	require.NoError(t, tx0.Rollback(ctx))

	require.NoError(t, tx1.Rollback(ctx)) // the first relay dies
	tx3, again := lock(false)
	require.Equal(t, first, again, "a dead relay's rows are taken again, whole")
	require.NoError(t, tx3.Rollback(ctx))
	require.NoError(t, tx2.Rollback(ctx))
}

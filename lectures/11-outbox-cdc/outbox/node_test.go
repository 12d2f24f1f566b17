package outbox_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/cdc"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db/dbtest"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill/drilltest"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/outbox"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// A Kafka node killed -9 while two relays publish the outbox and
// order-service writes an order every 10 ms: the relays' writes to the
// partitions it led wait until their leaders move (the idempotent producer
// retries them; a relay whose wait passes KAFKA_TIMEOUT fails and is
// started again, as a supervisor would), the relays go on publishing while
// the node is down, and once it is back every committed order is in Kafka:
// none lost, none invented, the outbox empty, duplicates counted (only a
// relay that failed after Kafka had its batch makes one).
func TestRelayLosesNothingThroughANodeKillAlone(t *testing.T) {
	schema := dbtest.Schema(t, "outbox_node") // first: without PostgreSQL the test skips before it starts a cluster
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	nodes := env.NodeControl(t)
	topic := env.FreshTopic(t, "outbox-node", 6)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	admin, err := db.Connect(ctx)
	require.NoError(t, err)
	defer admin.Close()
	require.NoError(t, db.ResetSchema(ctx, admin, schema, outbox.DDL...))
	app, err := db.ConnectIn(ctx, schema)
	require.NoError(t, err)
	defer app.Close()
	adm := env.Admin(t)
	from, err := drill.Start(ctx, adm, topic)
	require.NoError(t, err)
	run := fmt.Sprintf("outbox-node-%d", time.Now().UnixNano())
	tail, err := cdc.StartTail(ctx, env.Config, topic, from, run)
	require.NoError(t, err)
	defer tail.Close()

	// Two relays, each started again whenever it fails.
	rctx, stopRelays := context.WithCancel(ctx)
	defer stopRelays()
	var restarts atomic.Int32
	var relays sync.WaitGroup
	for range 2 {
		relays.Go(func() {
			for rctx.Err() == nil {
				_, err := outbox.RunRelay(rctx, env.Config, outbox.Relay{Schema: schema, Topic: topic, Batch: 10, Poll: 20 * time.Millisecond})
				if rctx.Err() != nil {
					return
				}
				restarts.Add(1)
				t.Logf("relay failed (%v); started again", err)
			}
		})
	}
	orders := drilltest.StartOrders(ctx, 10*time.Millisecond, func(ctx context.Context, n int) (string, error) {
		ev := drill.Order(7, run, n)
		return ev.OrderID, pgx.BeginFunc(ctx, app, func(tx pgx.Tx) error { return outbox.PlaceOrder(ctx, tx, ev, nil) })
	})
	brewtest.Eventually(t, 30*time.Second, "100 orders in Kafka before the kill", func() (bool, string) {
		return tail.Unique() >= 100, fmt.Sprint(tail.Unique())
	})

	out := drilltest.NodeOutage(t, env, nodes, topic, func() {
		// While the node is down: 300 more orders, and the relays publish them.
		want := orders.Count() + 300
		brewtest.Eventually(t, 60*time.Second, "300 more orders committed and in Kafka with the node down", func() (bool, string) {
			return orders.Count() >= want && tail.Unique() >= want, fmt.Sprintf("%d committed, %d in Kafka", orders.Count(), tail.Unique())
		})
	})
	// And after it is back.
	want := orders.Count() + 100
	brewtest.Eventually(t, 60*time.Second, "100 more orders with the node back", func() (bool, string) {
		return orders.Count() >= want, fmt.Sprint(orders.Count())
	})
	committed := orders.Stop(t)
	brewtest.Eventually(t, 60*time.Second, "the relays empty the outbox", func() (bool, string) {
		var left int
		err := app.QueryRow(ctx, "SELECT count(*) FROM outbox").Scan(&left)
		return err == nil && left == 0, fmt.Sprintf("%d rows left (%v)", left, err)
	})
	require.NoError(t, tail.Wait(ctx, len(committed), time.Minute))
	stopRelays()
	relays.Wait()

	d := drilltest.Count(t, env, adm, topic, from, run, committed)
	var slowest time.Duration
	for id, at := range committed {
		slowest = max(slowest, tail.FirstAt(id).Sub(at))
	}
	t.Logf("node %d down %s (leaders moved in %s): %d orders, %d events, lost %d, invented %d, duplicates %d, relay restarts %d, the slowest order reached Kafka %s after its COMMIT",
		out.Node, out.Down.Round(100*time.Millisecond), out.Moved.Round(100*time.Millisecond), len(committed), d.Events,
		len(d.Lost), len(d.Invented), d.Duplicates(), restarts.Load(), slowest.Round(10*time.Millisecond))
	require.Empty(t, d.Lost, "every committed order reaches Kafka")
	require.Empty(t, d.Invented)
	require.Equal(t, len(committed), d.Distinct, "one event id per order")
	if restarts.Load() == 0 {
		require.Zero(t, d.Duplicates(), "the idempotent producer's retries through the failover add no duplicate")
	}
}

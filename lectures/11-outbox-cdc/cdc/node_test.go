package cdc_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/cdc"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db/dbtest"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill/drilltest"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// A Kafka node killed -9 while the WAL reader streams and order-service
// writes an order every 10 ms: the reader's records to the partitions the
// node led wait until their leaders move, the slot is not acknowledged past
// them meanwhile, and once the node is back every committed order is in
// Kafka: none lost, none invented, duplicates counted (only a reader that
// failed and started again from the slot makes one).
func TestReaderLosesNothingThroughANodeKillAlone(t *testing.T) {
	schema := dbtest.Schema(t, "cdc_node") // first: without PostgreSQL the test skips before it starts a cluster
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	nodes := env.NodeControl(t)
	slot := slotFor(t, "cdc_node")
	topic := env.FreshTopic(t, "cdc-node", 6)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	p, err := db.Connect(ctx)
	require.NoError(t, err)
	defer p.Close()
	require.NoError(t, db.ResetSchema(ctx, p, schema, cdc.DDL...))
	require.NoError(t, cdc.Capture(ctx, p, schema, slot, slot))
	app, err := db.ConnectIn(ctx, schema)
	require.NoError(t, err)
	defer app.Close()
	adm := env.Admin(t)
	from, err := drill.Start(ctx, adm, topic)
	require.NoError(t, err)
	run := fmt.Sprintf("cdc-node-%d", time.Now().UnixNano())
	tail, err := cdc.StartTail(ctx, env.Config, topic, from, run)
	require.NoError(t, err)
	defer tail.Close()

	// The reader, started again whenever it fails.
	rctx, stopReader := context.WithCancel(ctx)
	defer stopReader()
	var restarts atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for rctx.Err() == nil {
			r := cdc.ReaderDefaults
			r.Slot, r.Publication, r.Topic = slot, slot, topic
			err := r.Stream(rctx, env.Config)
			if rctx.Err() != nil {
				return
			}
			restarts.Add(1)
			t.Logf("reader failed (%v); started again", err)
		}
	}()
	orders := drilltest.StartOrders(ctx, 10*time.Millisecond, func(ctx context.Context, n int) (string, error) {
		w, err := cdc.Place(ctx, app, drill.Order(11, run, n))
		return w.OrderID, err
	})
	brewtest.Eventually(t, 30*time.Second, "100 orders in Kafka before the kill", func() (bool, string) {
		return tail.Unique() >= 100, fmt.Sprint(tail.Unique())
	})

	out := drilltest.NodeOutage(t, env, nodes, topic, func() {
		want := orders.Count() + 300
		brewtest.Eventually(t, 60*time.Second, "300 more orders committed and in Kafka with the node down", func() (bool, string) {
			return orders.Count() >= want && tail.Unique() >= want, fmt.Sprintf("%d committed, %d in Kafka", orders.Count(), tail.Unique())
		})
	})
	want := orders.Count() + 100
	brewtest.Eventually(t, 60*time.Second, "100 more orders with the node back", func() (bool, string) {
		return orders.Count() >= want, fmt.Sprint(orders.Count())
	})
	committed := orders.Stop(t)
	require.NoError(t, tail.Wait(ctx, len(committed), time.Minute))
	stopReader()
	<-done

	d := drilltest.Count(t, env, adm, topic, from, run, committed)
	var slowest time.Duration
	for id, at := range committed {
		slowest = max(slowest, tail.FirstAt(id).Sub(at))
	}
	t.Logf("node %d down %s (leaders moved in %s): %d orders, %d events, lost %d, invented %d, duplicates %d, reader restarts %d, the slowest order reached Kafka %s after its COMMIT",
		out.Node, out.Down.Round(100*time.Millisecond), out.Moved.Round(100*time.Millisecond), len(committed), d.Events,
		len(d.Lost), len(d.Invented), d.Duplicates(), restarts.Load(), slowest.Round(10*time.Millisecond))
	require.Empty(t, d.Lost, "every committed order reaches Kafka")
	require.Empty(t, d.Invented)
	require.Equal(t, len(committed), d.Distinct, "one event id per order")
	if restarts.Load() == 0 {
		require.Zero(t, d.Duplicates(), "the idempotent producer's retries through the failover add no duplicate")
	}
}

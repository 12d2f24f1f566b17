package debezium_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/cdc"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db/dbtest"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/debezium"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// worker is how the kill test kills and starts the Connect worker: the
// stand's connect service.
var worker = func(t *testing.T) debezium.Worker {
	w, err := debezium.NewStandWorker(logWriter{t})
	require.NoError(t, err)
	return w
}

// offsetsTopic is the worker's offset.storage.topic.
var offsetsTopic = stand.ConnectOffsetsTopic

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) { w.t.Logf("%s", p); return len(p), nil }

// requireConnect skips the test when no Connect worker answers (fails it
// under BREW_REQUIRE_REAL=1: the real tier starts the connect service).
func requireConnect(t *testing.T) *debezium.Connect {
	t.Helper()
	c := debezium.NewConnect(debezium.ConnectURL())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		return c
	}
	msg := fmt.Sprintf("needs Kafka Connect on %s (%v): `scripts/brewstand services up postgres connect` starts it, `make test-real` runs the tests with it", c.Host(), err)
	if brewtest.RequireRealSet() {
		t.Fatal(msg + " [BREW_REQUIRE_REAL=1]")
	}
	t.Skip(msg)
	return nil
}

// options are the demo's, with the test's own schema, slot, publication,
// connector and topic; the connector and slot are removed when it ends.
func options(t *testing.T, env *brewtest.Env, c *debezium.Connect, prefix string) debezium.Options {
	o := debezium.Defaults
	o.Schema = dbtest.Schema(t, prefix)
	n := rand.IntN(1_000_000)
	o.Slot = fmt.Sprintf("t_%s_%06d", prefix, n)
	o.Publication = o.Slot
	o.Connector = fmt.Sprintf("brew-test-%s-%06d", prefix, n)
	o.Topic = env.FreshTopic(t, prefix, 6)
	o.Run = fmt.Sprintf("%s-test-%d", prefix, time.Now().UnixNano())
	o.Connect = c
	o.OffsetsTopic = offsetsTopic
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Remove(ctx, o.Connector); err != nil {
			t.Errorf("removing connector %s: %v", o.Connector, err)
		}
		p, err := db.Connect(ctx)
		if err != nil {
			return
		}
		defer p.Close()
		if err := cdc.Release(ctx, p, o.Publication, o.Slot); err != nil {
			t.Errorf("dropping slot %s: %v", o.Slot, err)
		}
	})
	return o
}

// Debezium's records match the outbox rows: the key is the row's
// aggregateid, the value its payload (the event order-service wrote), the
// id header the row's id, the type header its type; Debezium adds its
// context headers. Every order once (nothing restarts), the connector's
// offset in Connect's offsets topic is the one the REST API shows, and once
// removed the connector, its offsets and its slot are gone.
func TestRecordsMatchTheRows(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	c := requireConnect(t)
	o := options(t, env, c, "debezium")
	o.KillAt = -1
	o.Orders = 50
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := debezium.Run(ctx, env.Config, o)
	require.NoError(t, err)

	require.Equal(t, o.Orders, r.Written)
	require.Empty(t, r.Lost)
	require.Equal(t, o.Orders, r.Unique)
	require.Zero(t, r.Duplicates, "no restart, no record twice")

	require.Equal(t, o.Topic, r.Sample.Topic)
	require.Equal(t, brewkit.OrderID(0), r.Sample.Key, "key: the row's aggregateid")
	require.Equal(t, r.SampleRow.EventID, r.Sample.Header("id"), "header id: the row's id")
	require.Equal(t, string(brewkit.OrderPlaced), r.Sample.Header("type"), "header type: table.fields.additional.placement")
	require.Equal(t, o.Connector, r.Sample.Header("__debezium.context.connectorLogicalName"))
	var ev brewkit.Event
	require.NoError(t, json.Unmarshal([]byte(r.Sample.Value), &ev), "value: the payload, as it is")
	require.Equal(t, brewkit.OrderID(0), ev.OrderID)
	require.Equal(t, o.Run, ev.Run)

	require.Equal(t, fmt.Sprintf(`["%s",{"server":"%s"}]`, o.Connector, o.Connector), r.OffsetKey)
	require.Len(t, r.RestOffsets, 1)
	var stored map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.OffsetValue), &stored))
	require.Equal(t, r.RestOffsets[0].Offset["lsn"], stored["lsn"], "the REST API reads the offsets topic")
	require.Equal(t, map[string]any{"server": o.Connector}, r.RestOffsets[0].Partition)

	require.True(t, r.Removed)
	require.True(t, r.SlotDropped)
	_, found, err := c.Status(ctx, o.Connector)
	require.NoError(t, err)
	require.False(t, found, "the connector is deleted")
}

// The worker killed -9 while order-service writes, and started again: no
// committed order is lost, and what Connect had sent since its last offset
// flush is sent again (duplicates, counted). The only test that kills the
// worker: it holds the stand alone.
func TestWorkerKilledLosesNothingAloneReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	c := requireConnect(t)
	env.Exclusive(t)
	o := options(t, env, c, "debezium")
	o.Worker = worker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r, err := debezium.Run(ctx, env.Config, o)
	require.NoError(t, err)

	require.NotEmpty(t, r.Killed)
	require.Equal(t, brewkit.OrderID(int64(o.KillAt)), r.KilledAfter)
	require.Equal(t, o.Orders, r.Written)
	require.Empty(t, r.Lost, "every committed order reaches Kafka")
	require.Equal(t, o.Orders, r.Unique)
	require.Equal(t, r.Written+r.Duplicates, r.Events)
	require.Greater(t, r.Delivering, r.WorkerBack, "records again once the worker is back")
	require.True(t, r.Removed)
	require.True(t, r.SlotDropped)

	var b strings.Builder
	debezium.Print(&b, o, r)
	t.Log("\n" + b.String())
	out := strings.NewReplacer(o.Topic, debezium.Defaults.Topic, o.Slot, debezium.Defaults.Slot,
		o.Connector, debezium.Defaults.Connector, o.Schema+".", debezium.Defaults.Schema+".",
		o.OffsetsTopic, stand.ConnectOffsetsTopic, o.Connect.Host(), debezium.NewConnect(debezium.DefaultConnect).Host()).Replace(b.String())
	brewtest.MatchesReadme(t, "../README.md", "debezium", out)
}

func TestStatusRunning(t *testing.T) {
	var st debezium.Status
	require.NoError(t, json.Unmarshal([]byte(`{"connector":{"state":"RUNNING"},"tasks":[{"id":0,"state":"FAILED","trace":"java.lang.NoClassDefFoundError: x\n\tat y"}]}`), &st))
	ok, failed := st.Running()
	require.False(t, ok)
	require.Equal(t, "task 0 FAILED: java.lang.NoClassDefFoundError: x", failed)
	require.NoError(t, json.Unmarshal([]byte(`{"connector":{"state":"RUNNING"},"tasks":[{"id":0,"state":"RUNNING"}]}`), &st))
	ok, _ = st.Running()
	require.True(t, ok)
	require.NoError(t, json.Unmarshal([]byte(`{"connector":{"state":"RUNNING"},"tasks":[]}`), &st))
	ok, failed = st.Running()
	require.False(t, ok, "no task yet")
	require.Empty(t, failed)
}

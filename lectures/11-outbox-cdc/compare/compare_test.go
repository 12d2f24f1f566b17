package compare_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/compare"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db/dbtest"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/debezium"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// The three producers on the same load: each delivers every committed
// order; the relay queries its outbox table (at least once per batch, and
// on every idle poll) and deletes every row it sent, while the WAL readers,
// the Go one and Debezium, never query it and leave its rows alone. The
// speeds are measured, not asserted.
func TestThreeProducersDeliverEveryEventReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	dbtest.Require(t)
	c := debezium.NewConnect(debezium.ConnectURL())
	requireConnect(t, c)
	o := compare.Defaults // the README's run
	o.Name = fmt.Sprintf("t_compare_%06d", rand.IntN(1_000_000))
	o.Run = fmt.Sprintf("compare-test-%d", time.Now().UnixNano())
	o.Command = []string{brewtest.BuildCmdAt(t, "../cmd/compare")}
	o.Connect = c
	if w, err := debezium.NewStandWorker(nil); err == nil {
		o.Worker = w
	}
	adm := env.Admin(t)
	t.Cleanup(func() { cleanup(o, adm) })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r, err := compare.Run(ctx, env.Config, o)
	require.NoError(t, err)

	require.Len(t, r.Rows, 3)
	written := o.Backlog + o.Steady
	for _, row := range r.Rows {
		require.Equal(t, written, row.Written, row.Producer)
		require.Zero(t, row.Lost, "%s delivers every committed order", row.Producer)
		require.Equal(t, written, row.Unique, row.Producer)
		require.Positive(t, row.PerSec, row.Producer)
		require.Positive(t, row.P50, row.Producer)
		require.LessOrEqual(t, row.P50, row.P99, row.Producer)
		switch row.Producer {
		case compare.Relay:
			require.GreaterOrEqual(t, row.Scans, int64(written/compare.RelayBatch), "the relay queries its outbox for every batch")
			require.Equal(t, int64(written), row.Deleted, "and deletes each row it sent")
			require.Positive(t, row.RSS)
		case compare.CDC:
			require.Zero(t, row.Scans, "the Go reader never queries the outbox")
			require.Zero(t, row.Deleted)
			require.Positive(t, row.RSS)
		case compare.Debezium:
			require.Zero(t, row.Scans, "Debezium never queries the outbox")
			require.Zero(t, row.Deleted)
		}
	}

	var b strings.Builder
	compare.Print(&b, o, r)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "compare", b.String())
}

func requireConnect(t *testing.T, c *debezium.Connect) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		return
	}
	msg := fmt.Sprintf("needs Kafka Connect on %s (%v): `scripts/brewstand services up postgres connect` starts it, `make test-real` runs the tests with it", c.Host(), err)
	if brewtest.RequireRealSet() {
		t.Fatal(msg + " [BREW_REQUIRE_REAL=1]")
	}
	t.Skip(msg)
}

// cleanup drops what the run left when it failed half-way: its schemas,
// slots, connector and topics.
func cleanup(o compare.Options, adm *kadm.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = o.Connect.Remove(ctx, "brew-"+o.Name+"-debezium")
	p, err := db.Connect(ctx)
	if err != nil {
		return
	}
	defer p.Close()
	for _, prod := range compare.Producers {
		slot := "brew_" + o.Name + "_" + string(prod)
		p.Exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active", slot) //nolint:errcheck // best effort
		p.Exec(ctx, "DROP PUBLICATION IF EXISTS "+slot)                                                                               //nolint:errcheck // best effort
		p.Exec(ctx, "DROP SCHEMA IF EXISTS "+o.Name+"_"+string(prod)+" CASCADE")                                                      //nolint:errcheck // best effort
	}
	for _, prod := range compare.Producers {
		adm.DeleteTopics(ctx, "brew.outbox."+o.Name+"-"+string(prod)) //nolint:errcheck // best effort
	}
}

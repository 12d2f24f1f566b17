package dualwrite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db/dbtest"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/dualwrite"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// A writer killed between its two writes leaves the first without the
// second, in each order of the writes: the row with no event when the row
// comes first (a lost event), the event with no row when the event comes
// first or inside the row's transaction (an invented event), once per kill,
// for exactly the orders it was killed at.
func TestEveryKillBetweenTheWritesLosesOrInventsAnEventReadme(t *testing.T) {
	schema := dbtest.Schema(t, "dual_write") // first: without PostgreSQL the test skips before it starts a cluster
	env := brewtest.Cluster(t)
	o := dualwrite.Defaults // the README's run
	o.Schema = schema
	o.Topic = env.FreshTopic(t, "dual-write", 6)
	o.Run = "dual-write-test"
	o.Command = []string{brewtest.BuildCmdAt(t, "../cmd/dual-write"), "writer"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := dualwrite.Run(ctx, env.Config, o)
	require.NoError(t, err)

	require.Len(t, r.Rows, 3)
	require.Len(t, r.Rows[0].Killed, o.Kills)
	var killed []string
	for _, k := range r.Rows[0].Killed {
		killed = append(killed, brewkit.OrderID(int64(k)))
	}
	for _, row := range r.Rows {
		require.Equal(t, r.Rows[0].Killed, row.Killed, "the same kill points in each order of writes")
		require.Zero(t, row.Duplicates, row.Mode)
		require.Positive(t, row.Timing.Orders, row.Mode)
		switch row.Mode {
		case dualwrite.RowFirst:
			require.Equal(t, o.Orders, row.Rows, "every order committed")
			require.Equal(t, o.Orders-o.Kills, row.Events)
			require.Equal(t, killed, row.LostIDs, "the orders killed after the INSERT never reach Kafka")
			require.Empty(t, row.InventedID)
		default:
			require.Equal(t, o.Orders-o.Kills, row.Rows, row.Mode)
			require.Equal(t, o.Orders, row.Events, "every order acknowledged by Kafka (%s)", row.Mode)
			require.Equal(t, killed, row.InventedID, "the orders killed after the ack are in Kafka only (%s)", row.Mode)
			require.Empty(t, row.LostIDs, row.Mode)
		}
	}

	var b strings.Builder
	dualwrite.Print(&b, o, r)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "dual-write", strings.ReplaceAll(b.String(), o.Topic, dualwrite.Defaults.Topic))
}

package inbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db/dbtest"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/inbox"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// The outbox's duplicates and the batches a kitchen killed between its
// database commit and its offset commit gets again: the kitchen with only
// the offset cooks each of them again, the kitchen with an inbox none,
// and neither misses an order.
func TestInboxNeverCooksTwiceReadme(t *testing.T) {
	orders, kitchen := dbtest.Schema(t, "inbox_orders"), dbtest.Schema(t, "kitchen") // first: without PostgreSQL the test skips before it starts a cluster
	env := brewtest.Cluster(t)
	o := inbox.Defaults // the README's run
	o.Outbox.Schema, o.Schema = orders, kitchen
	o.Outbox.Topic = env.FreshTopic(t, "inbox", 6)
	o.Run = "inbox-test"
	o.Command = []string{brewtest.BuildCmdAt(t, "../cmd/inbox")}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := inbox.Run(ctx, env.Config, o)
	require.NoError(t, err)

	in := r.Input
	require.Equal(t, o.Outbox.Orders, in.Rows)
	require.Zero(t, in.Lost)
	require.Equal(t, 2*o.Outbox.Batch, in.Duplicates, "relay kills at locked, acked, deleted: two batches sent again")
	require.Len(t, r.Rows, 2)
	for _, row := range r.Rows {
		require.Equal(t, o.Kills, row.Kills, row.Mode)
		require.Zero(t, row.NotCooked, "%s: every committed order cooked", row.Mode)
		require.Equal(t, in.Rows, row.Orders, row.Mode)
		require.GreaterOrEqual(t, row.Redelivered, o.Kills, "%s: a kitchen killed before its offset commit gets its batch again", row.Mode)
		require.Equal(t, in.Events+row.Redelivered, row.Read, row.Mode)
		switch row.Mode {
		case inbox.OffsetsOnly:
			require.Equal(t, row.Read, row.Tickets, "every record read is cooked")
			require.Equal(t, in.Duplicates+row.Redelivered, row.Tickets-row.Orders)
			require.Positive(t, row.CookedTwice)
			require.Zero(t, row.Skipped)
		case inbox.WithInbox:
			require.Equal(t, in.Rows, row.Tickets, "one ticket per order")
			require.Zero(t, row.CookedTwice)
			require.Equal(t, row.Read-in.Rows, row.Skipped, "each repeat skipped: the outbox's duplicates and the redelivered")
		}
	}

	var b strings.Builder
	inbox.Print(&b, o, r)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "inbox", strings.ReplaceAll(b.String(), o.Outbox.Topic, inbox.Defaults.Outbox.Topic))
}

package shutdown_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/lectures/10-processing-failures/shutdown"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// A courier stopped with SIGTERM in the middle of a batch books what it
// holds, commits it and leaves the group: the next instance gets the
// partitions at once and re-reads nothing it booked. One killed with
// SIGKILL leaves what it booked since its last commit to be read again and
// its partitions to wait out its session; the idempotency key keeps every
// order one booking. No order is lost either way.
func TestSigtermRereadsNothingSigkillRereadsReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	run, addr, err := partner.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { run.Close() })
	o := shutdown.Defaults
	o.Topic = env.FreshTopic(t, "courier-shutdown", 6)
	o.Run, o.Partner, o.PartnerAddr = "shutdown-test", partner.NewClient(addr), addr
	o.Courier = []string{brewtest.BuildCmdAt(t, "../cmd/shutdown"), "courier"}
	o.Progress = func(s string) { t.Log(s) }
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rows, err := shutdown.Run(ctx, env.Config, o)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	term, kill := rows[0], rows[1]

	for _, r := range rows {
		require.GreaterOrEqual(t, r.Booked, o.StopAfter, "%s: the signal came after %d bookings", r.Signal, o.StopAfter)
		require.Less(t, r.Booked, o.Orders, "%s: in the middle of the batch", r.Signal)
		require.Zero(t, r.BookedTwice, "%s: the idempotency key", r.Signal)
		require.Zero(t, r.Lost, "%s", r.Signal)
	}
	require.Positive(t, term.Drained, "SIGTERM: what was in flight and queued is booked before the exit")
	require.Equal(t, int64(term.Booked), term.Committed, "SIGTERM: everything booked is committed")
	require.Zero(t, term.Reread, "SIGTERM: the next instance re-reads nothing done")
	require.Zero(t, term.Replays)
	require.Less(t, term.ExitAfter, 5*time.Second)
	require.Less(t, term.NextAssigned, o.SessionTimeout/2, "SIGTERM: the group was left, the partitions free at once")

	require.Less(t, kill.Committed, int64(kill.Booked), "SIGKILL: what was booked since the last commit is not committed")
	require.Positive(t, kill.Reread, "SIGKILL: and is read again")
	require.GreaterOrEqual(t, kill.Replays, kill.Reread, "every re-read order booked again is answered with its first booking")
	require.Greater(t, kill.NextAssigned, term.NextAssigned+time.Second, "SIGKILL: the partitions wait for the dead member's session to time out")
	require.Less(t, kill.NextAssigned, o.SessionTimeout+5*time.Second)

	var b strings.Builder
	shutdown.Print(&b, o, rows)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "shutdown", strings.ReplaceAll(b.String(), o.Topic, "brew.orders.v1"))
}

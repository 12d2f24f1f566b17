package doublebooking_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/10-processing-failures/doublebooking"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// A booking retried after a timeout is a second booking without an
// idempotency key, and never with the order id as the key.
func TestIdempotencyKeyEndsDoubleBookingsReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	run, addr, err := partner.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { run.Close() })
	o := doublebooking.Defaults
	o.Topic = env.FreshTopic(t, "courier-double", 6)
	o.Run, o.Partner = "double-test", partner.NewClient(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rows, err := doublebooking.Run(ctx, env.Config, o)
	require.NoError(t, err)
	require.Len(t, rows, 2)

	none, keyed := rows[0], rows[1]
	require.Positive(t, none.TimedOut)
	require.Positive(t, none.BookedTwice, "a timed-out booking retried without a key is booked again")
	require.Equal(t, none.Calls, none.Bookings, "without a key every call that reaches the partner books")
	require.Positive(t, keyed.TimedOut)
	require.Zero(t, keyed.BookedTwice)
	require.Equal(t, o.Orders, keyed.Bookings, "one booking per order")

	var b strings.Builder
	doublebooking.Print(&b, o, rows)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "double-booking", b.String())
}

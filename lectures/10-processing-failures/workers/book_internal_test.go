package workers

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// A booking that got no answer in time is made again with its key: the
// partner booked it once, and the second call gets that booking back.
func TestBookEventRetriesACallLeftUnanswered(t *testing.T) {
	run, addr, err := partner.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { run.Close() })
	p := partner.NewClient(addr)
	p.Timeout = 200 * time.Millisecond
	ctx := context.Background()
	_, err = p.SetFaults(ctx, partner.Faults{TimeoutAfterBooking: 1, Hang: partner.Duration(5 * time.Second)})
	require.NoError(t, err)

	v, err := json.Marshal(brewkit.Event{Type: brewkit.OrderPlaced, OrderID: "ord-7", ShopID: "shop-01", Seq: 2})
	require.NoError(t, err)
	require.NoError(t, bookEvent(ctx, p, &kgo.Record{Value: v}))

	l, err := p.Log(ctx)
	require.NoError(t, err)
	require.Len(t, l.Bookings, 1)
	require.Equal(t, "ord-7#2", l.Bookings[0].Key)
	require.Equal(t, 1, l.Calls.TimedOut, "the first call booked and got no answer")
	require.Equal(t, 1, l.Calls.Replayed, "the second got the first booking back")
}

package partner

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func listen(t *testing.T) (*Running, *Client) {
	t.Helper()
	r, addr, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r, NewClient(addr)
}

func TestIdempotencyKeyBooksOnce(t *testing.T) {
	_, c := listen(t)
	ctx := context.Background()
	first, err := c.Book(ctx, Request{OrderID: "ord-1"}, "ord-1")
	require.NoError(t, err)
	again, err := c.Book(ctx, Request{OrderID: "ord-1"}, "ord-1")
	require.NoError(t, err)
	require.Equal(t, first, again)
	_, err = c.Book(ctx, Request{OrderID: "ord-1"}, "")
	require.NoError(t, err)

	l, err := c.Log(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"ord-1": 2}, l.Times(), "the keyed call books once, the unkeyed one again")
	require.Equal(t, []string{"ord-1"}, l.Doubles())
	require.Equal(t, Calls{Total: 3, Booked: 2, Replayed: 1}, l.Calls)
}

func TestFaults(t *testing.T) {
	_, c := listen(t)
	ctx := context.Background()

	_, err := c.Book(ctx, Request{}, "")
	var pe *Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, http.StatusBadRequest, pe.Status)
	require.False(t, Retriable(err), "a malformed booking never succeeds")

	_, err = c.SetFaults(ctx, Faults{OutageFor: Duration(300 * time.Millisecond)})
	require.NoError(t, err)
	_, err = c.Book(ctx, Request{OrderID: "ord-2"}, "ord-2")
	require.ErrorAs(t, err, &pe)
	require.Equal(t, http.StatusServiceUnavailable, pe.Status)
	require.True(t, Retriable(err))
	time.Sleep(350 * time.Millisecond) // the outage's own length
	_, err = c.Book(ctx, Request{OrderID: "ord-2"}, "ord-2")
	require.NoError(t, err, "the outage is over")

	_, err = c.SetFaults(ctx, Faults{TimeoutAfterBooking: 1, Hang: Duration(5 * time.Second)})
	require.NoError(t, err)
	c.Timeout = 200 * time.Millisecond
	_, err = c.Book(ctx, Request{OrderID: "ord-3"}, "ord-3")
	require.ErrorAs(t, err, &pe)
	require.Zero(t, pe.Status, "no answer came")
	require.True(t, Retriable(err))
	l, err := c.Log(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, l.Times()["ord-3"], "booked though the caller timed out")

	require.NoError(t, c.Reset(ctx))
	l, err = c.Log(ctx)
	require.NoError(t, err)
	require.Empty(t, l.Bookings)
}

// The partner's error rate is drawn from its seed: the same seed refuses the
// same calls. math/rand/v2's PCG is specified, so seed 7 at 30% refuses
// exactly 297 of the first 1,000 calls, in every run and on every machine.
func TestErrorRateIsRepeatable(t *testing.T) {
	const calls = 1000
	refused := func() []int {
		_, c := listen(t)
		ctx := context.Background()
		_, err := c.SetFaults(ctx, Faults{ErrorRate: 0.3, Seed: 7})
		require.NoError(t, err)
		var n []int
		for i := range calls {
			if _, err := c.Book(ctx, Request{OrderID: "ord-4"}, ""); err != nil {
				n = append(n, i)
			}
		}
		return n
	}
	a, b := refused(), refused()
	require.Equal(t, a, b, "the same seed refuses the same calls")
	require.Len(t, a, 297, "seed 7 refuses 297 of %d calls at 30%%", calls)
}

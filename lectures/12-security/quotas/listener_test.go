package quotas

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// A quota on a user holds on every listener the user logs in on: logged in
// with a client certificate (CN=user, so User:user) on the MTLS listeners,
// the user is throttled as on SECURE, and each broker holds it to what Kafka
// promises over its window: rate x 11 s (quota.window.num x
// quota.window.size.seconds) and the requests in flight when it noticed.
func TestQuotaHoldsOnTheMTLSListenerToo(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := secure.Find(ctx, env.Config)
	require.NoError(t, err)
	cl, adm, err := brewkit.Connect(ctx, c.Admin)
	require.NoError(t, err)
	t.Cleanup(cl.Close) // after the cleanup below, which uses it
	user := fmt.Sprintf("quota-mtls-%d", rand.Uint32())
	t.Cleanup(func() {
		if _, err := Delete(context.Background(), adm, user); err != nil {
			t.Errorf("cleaning up %s: %v", user, err)
		}
	})
	// Low enough that even a loaded machine passes the window's 11 s of
	// it within the run's 4 s: at 64 KiB/s a CI run wrote 225-660 KiB
	// flat out, under the 704 KiB a fresh client may, and was not throttled.
	const rate = 16 << 10
	require.NoError(t, Ensure(ctx, adm, user))
	require.NoError(t, SetQuota(ctx, adm, user, rate))
	require.NoError(t, WaitEveryBroker(ctx, cl, user, rate))
	cert, key, err := c.Issue(user, time.Time{}, time.Time{})
	require.NoError(t, err)
	t.Cleanup(func() { os.Remove(cert); os.Remove(key) }) //nolint:errcheck // best effort
	cfg, err := c.Certificate(cert, key)
	require.NoError(t, err)

	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: TopicPrefix, Partitions: Partitions})
	require.NoError(t, err)
	t.Cleanup(func() { drop(context.Background()) }) //nolint:errcheck // best effort
	leaderOf, err := leaders(ctx, adm, topic)
	require.NoError(t, err)
	p, err := newProducer(ctx, cfg, user, topic, 1024, leaderOf)
	require.NoError(t, err)
	defer p.cl.Close()
	f, err := p.run(ctx, time.Now(), 4*time.Second)
	require.NoError(t, err)

	for n, b := range f.Bytes {
		t.Logf("node %d: %d KiB in %s, throttled %s", n, b>>10, f.Elapsed, f.Throttled[n])
		require.LessOrEqual(t, b, int64(11*rate+5*64<<10), "node %d: within the quota over its window", n)
		// How long it waits depends on when in the run it passes the
		// window's allowance (1 to 3.5 s of 4 here): that each broker made
		// it wait is the claim.
		require.Positive(t, f.Throttled[n], "node %d throttles the user on MTLS too", n)
	}
	require.Positive(t, f.Throttles, "the brokers report throttle times on MTLS too")
}

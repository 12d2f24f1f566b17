package quotas_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/12-security/quotas"
	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/sim"
)

// users are a test's own noisy and quiet users, whose quota, ACL and SCRAM
// passwords are deleted when it ends.
func users(t *testing.T, c secure.Cluster) (noisy, quiet string) {
	t.Helper()
	n := rand.Uint32()
	noisy, quiet = fmt.Sprintf("quota-noisy-%d", n), fmt.Sprintf("quota-quiet-%d", n)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cl, adm, err := brewkit.Connect(ctx, c.Admin)
		if err != nil {
			t.Errorf("cleaning up %s and %s: %v", noisy, quiet, err)
			return
		}
		defer cl.Close()
		if _, err := quotas.Delete(ctx, adm, noisy, quiet); err != nil {
			t.Errorf("cleaning up: %v", err)
		}
	})
	return noisy, quiet
}

// On real Kafka, in one run: without a quota noisy produces at several
// times the rate it is about to get; with producer_byte_rate on user=noisy
// every broker holds it to the quota, averaged over the phase (as long as
// Kafka's quota window), and tells its client to wait (throttle time); quiet,
// producing at the same time with no quota, is not held to it and goes at
// least as fast as before. The printed table is the README's.
func TestQuotaBoundsNoisyNotQuietReadmeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	// A measurement of throughput: alone on the stand, so that another
	// test's load does not change one phase and not the other.
	env.Exclusive(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c, err := secure.Find(ctx, env.Config)
	require.NoError(t, err)
	o := quotas.Defaults
	rate := float64(o.Rate)
	// The lesson needs a machine that writes faster than the quota: flat
	// out is 7 to 12 times the quota on the native stand here, 3 to 7 on
	// the docker one, 2 under a CI build beside it, and 1.2 in a CI run
	// whose containers tier started a second cluster beside it (measured).
	// That is the machine's capacity, no claim of Kafka's, and it must hold
	// in both phases: a quota phase in which the machine could write little
	// more than the quota shows the quota little (in CI: noisy 3.4 times
	// the quota flat out, then quiet, unthrottled beside it, at 1.3 times
	// the quota, and noisy was throttled 6% of the phase; at 2.6 times,
	// 36%; 94% at 30 times, the README's run). quiet's rate in the quota
	// phase is what the machine could write then, since quiet has no quota.
	// So a run that falls short in either phase is measured again, with
	// users of its own, up to six times 20 s apart. The tiers run it alone
	// on the machine (scripts/test's solo): sharded beside two other
	// instances' fault drills it fell short six times in a row.
	var r quotas.Result
	var b strings.Builder
	for attempt := 1; ; attempt++ {
		o.Noisy, o.Quiet = users(t, c)
		o.Progress = func(s string) { t.Log(s) }
		r, err = quotas.Run(ctx, c, o)
		require.NoError(t, err)
		b.Reset()
		quotas.Print(&b, r)
		t.Log("\n" + b.String())
		for _, n := range r.Leaders {
			t.Logf("node %d: noisy %.0f -> %.0f KiB/s (throttled %s in %d responses), quiet %.0f -> %.0f KiB/s",
				n, r.Noisy.Without.Node(n)/1024, r.Noisy.With.Node(n)/1024, r.Noisy.With.Throttled[n], r.Noisy.With.Throttles,
				r.Quiet.Without.Node(n)/1024, r.Quiet.With.Node(n)/1024)
		}
		free, limited := r.Noisy.Without.PerBroker(), r.Quiet.With.PerBroker()
		if (free >= 3*rate && limited >= 2.5*rate) || attempt == 6 {
			break
		}
		t.Logf("attempt %d: flat out noisy wrote %.0f KiB/s a broker (3 times the quota needed), quiet beside the quota %.0f KiB/s (2.5 times needed): the machine is busy; measuring again in 20s",
			attempt, free/1024, limited/1024)
		select {
		case <-ctx.Done():
			t.Fatalf("no attempt left: %v", ctx.Err())
		case <-time.After(20 * time.Second):
		}
	}

	require.Equal(t, map[string]float64{quotas.ProducerByteRate: rate}, r.Described, "DescribeClientQuotas gives the quota back")
	require.NotEmpty(t, r.Leaders)
	// Half as much again is enough for the quota to be what bounds noisy.
	require.GreaterOrEqual(t, r.Noisy.Without.PerBroker(), 1.5*rate, "without the quota noisy is above it")
	for _, n := range r.Leaders {
		require.InDelta(t, rate, r.Noisy.With.Node(n), 0.2*rate, "node %d holds noisy within 20%% of the quota", n)
	}
	require.InDelta(t, rate, r.Noisy.With.PerBroker(), 0.2*rate)
	require.Positive(t, r.Noisy.With.Throttles, "the brokers report throttle times to noisy's client")
	require.Greater(t, r.Noisy.With.ThrottledShare(r.Leaders), 0.2, "noisy's client waits a good part of the phase")
	require.Zero(t, r.Noisy.Without.Throttles, "no throttle without the quota")

	// quiet shares the machine with noisy, so its own speed moves with the
	// load; what Kafka promises is that noisy's quota is not quiet's.
	require.GreaterOrEqual(t, r.Quiet.With.PerBroker(), 1.2*rate, "quiet is not held to noisy's quota")
	require.Zero(t, r.Quiet.With.Throttles+r.Quiet.Without.Throttles, "quiet is never throttled")

	out := strings.NewReplacer(o.Noisy, "noisy", o.Quiet, "quiet").Replace(b.String())
	brewtest.MatchesReadme(t, "../README.md", "quotas", out)
}

// The simulation stores quotas (kfake's DescribeClientQuotas and
// AlterClientQuotas handlers) but does not enforce them: the same run there
// shows the quota described back, noisy far above it and no throttle time,
// and the quota removed at the end. Delete removes a quota left behind, the
// ACL and both users.
func TestSimulationStoresAQuotaButDoesNotEnforceIt(t *testing.T) {
	env := brewtest.SimWith(t, sim.Options{Login: &sim.Login{User: "brew", Pass: "brew-secret", Mechanism: secure.Mechanism}})
	c := secure.Simulated(env.Config)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := quotas.Defaults
	o.Noisy, o.Quiet = "noisy", "quiet"
	// Three seconds flat out: under go test -race on a busy machine the
	// first acknowledgement alone took more than one (make check in CI saw
	// no record acknowledged in a 1 s phase).
	o.Rate, o.Free, o.Limited = 16<<10, 500*time.Millisecond, 3*time.Second
	r, err := quotas.Run(ctx, c, o)
	require.NoError(t, err)
	require.Equal(t, map[string]float64{quotas.ProducerByteRate: float64(o.Rate)}, r.Described)
	require.Greater(t, r.Noisy.With.PerBroker(), 3*float64(o.Rate), "not enforced")
	require.Zero(t, r.Noisy.With.Throttles)

	adm := env.Admin(t)
	q, err := quotas.Describe(ctx, adm, o.Noisy)
	require.NoError(t, err)
	require.Empty(t, q, "the run removes the quota at its end")
	require.NoError(t, quotas.SetQuota(ctx, adm, o.Noisy, o.Rate)) // as an interrupted run leaves it
	d, err := quotas.Delete(ctx, adm, o.Noisy, o.Quiet)
	require.NoError(t, err)
	require.Equal(t, []string{o.Noisy}, d.Quotas)
	require.Equal(t, 2, d.ACLs)
	require.ElementsMatch(t, []string{o.Noisy, o.Quiet}, d.Users)
	q, err = quotas.Describe(ctx, adm, o.Noisy)
	require.NoError(t, err)
	require.Empty(t, q)
	d, err = quotas.Delete(ctx, adm, o.Noisy, o.Quiet)
	require.NoError(t, err)
	require.Equal(t, quotas.Deleted{}, d, "a second Delete finds nothing")
}

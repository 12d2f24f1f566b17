package users_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/lectures/12-security/users"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/sim"
)

// fresh is Defaults with user names of the test's own, deleted when it ends.
func fresh(t *testing.T, c secure.Cluster) users.Options {
	t.Helper()
	o := users.Defaults
	n := rand.IntN(1e9)
	o.Partner, o.Analytics = fmt.Sprintf("partner-%d", n), fmt.Sprintf("analytics-%d", n)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if _, err := users.Delete(ctx, c, o.Partner, o.Analytics); err != nil {
			t.Errorf("deleting the test's users: %v", err)
		}
	})
	return o
}

// realCluster is the real stand's secured cluster.
func realCluster(t *testing.T) (*brewtest.Env, secure.Cluster) {
	t.Helper()
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := secure.Find(ctx, env.Config)
	require.NoError(t, err)
	return env, c
}

// simulated is a simulation whose every node wants a SCRAM-SHA-512 login,
// with ACLs on (the Denied login turns them on in kfake).
func simulated(t *testing.T) secure.Cluster {
	t.Helper()
	env := brewtest.SimWith(t, sim.Options{
		Login:  &sim.Login{User: "brew", Pass: "brew-secret", Mechanism: secure.Mechanism},
		Denied: &sim.Login{User: "nobody", Pass: "nobody-secret", Mechanism: secure.Mechanism},
	})
	return secure.Simulated(env.Config)
}

func run(t *testing.T, c secure.Cluster, o users.Options) users.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := users.Run(ctx, c, o)
	require.NoError(t, err)
	return r
}

// only is r's users among names.
func only(r users.Result, names ...string) []users.User {
	return slices.DeleteFunc(slices.Clone(r.Users), func(u users.User) bool { return !slices.Contains(names, u.Name) })
}

// On real Kafka: the operator creates both users and DescribeUserSCRAMs
// lists them with the mechanism and iterations; the partner, with no ACL,
// logs in and sees the brokers but no topic, and its read is refused; a wrong
// password is Kafka's SASL_AUTHENTICATION_FAILED, while a client without SASL
// or without TLS gets only EOF from franz-go, which brewkit.Ping turns into
// what to set; after a rotation the old password is refused and the new one
// taken on new connections, but a connection logged in before goes on
// serving (connections.max.reauth.ms=0), until the client opens another.
func TestUsersLoginsAndRotationReadme(t *testing.T) {
	env, c := realCluster(t)
	o := fresh(t, c)
	o.Topic = env.FreshTopic(t, "secure-users", 3)
	r := run(t, c, o)

	want := []users.User{
		{Name: o.Analytics, Mechanism: "SCRAM-SHA-512", Iterations: 8192},
		{Name: o.Partner, Mechanism: "SCRAM-SHA-512", Iterations: 8192},
	}
	require.Equal(t, want, only(r, o.Partner, o.Analytics))
	require.Contains(t, r.Users, users.User{Name: "brew", Mechanism: "SCRAM-SHA-512", Iterations: 8192}, "the stand's admin")

	require.Equal(t, c.SASL, r.Partner.Brokers, "metadata lists the listener the client came in on")
	require.Zero(t, r.Partner.ACLs)
	require.Zero(t, r.Partner.Topics, "no ACL: metadata shows it no topic")
	require.Positive(t, r.Partner.All)
	require.ErrorIs(t, r.Partner.ReadErr, kerr.TopicAuthorizationFailed)

	require.ErrorIs(t, r.Wrong.Raw, kerr.SaslAuthenticationFailed)
	require.Contains(t, r.Wrong.Raw.Error(), "invalid credentials")
	require.GreaterOrEqual(t, r.Wrong.RawAfter, 100*time.Millisecond, "connection.failed.authentication.delay.ms delays the refusal")
	var login *brewkit.LoginError
	require.ErrorAs(t, r.Wrong.Diagnosis, &login)
	require.ErrorIs(t, login, kerr.SaslAuthenticationFailed)

	require.ErrorIs(t, r.NoSASL.Raw, io.EOF, "franz-go without SASL on a SASL listener: the broker hangs up")
	var guess *kgo.ErrFirstReadEOF
	require.ErrorAs(t, r.NoSASL.Raw, &guess, "franz-go's guess around the EOF")
	require.NotErrorIs(t, r.NoSASL.Raw, context.DeadlineExceeded)
	require.Less(t, r.NoSASL.RawAfter, users.RawWait, "at once, not a timeout")
	require.ErrorAs(t, r.NoSASL.Diagnosis, &login)
	require.Contains(t, login.Error(), "wants a SASL login (it offers SCRAM-SHA-512)")

	require.NotNil(t, r.NoTLS)
	require.ErrorContains(t, r.NoTLS.Raw, "invalid large response size 352518912", "franz-go reads the broker's TLS alert as a response's size")
	require.ErrorContains(t, r.NoTLS.Raw, "appear to be a tls alert record", "and says so")
	require.NotErrorIs(t, r.NoTLS.Raw, context.DeadlineExceeded)
	require.Less(t, r.NoTLS.RawAfter, users.RawWait, "at once, not a timeout")
	var tlsErr *brewkit.TLSError
	require.ErrorAs(t, r.NoTLS.Diagnosis, &tlsErr)
	require.False(t, tlsErr.Cfg.TLS)

	rot := r.Rotation
	require.Equal(t, "0", rot.ReauthMs)
	require.ErrorAs(t, rot.OldLogin, &login)
	require.ErrorIs(t, rot.OldLogin, kerr.SaslAuthenticationFailed)
	require.NoError(t, rot.NewLogin)
	require.NoError(t, rot.Stale, "the connection logged in before the rotation still serves")
	require.Zero(t, rot.StaleDials, "on the same connection")
	require.ErrorIs(t, rot.Other, kerr.SaslAuthenticationFailed, "a new connection of the same client logs in with the old password")

	r.Users = only(r, "brew", o.Partner, o.Analytics) // other tests' users come and go
	var b strings.Builder
	users.Print(&b, o, r)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "users", lectureNames(b.String(), o))
}

// lectureNames writes the run's users and topic as the lecture's.
func lectureNames(out string, o users.Options) string {
	return strings.NewReplacer(o.Partner, "partner", o.Analytics, "analytics", o.Topic, brewkit.Shipments.Name).Replace(out)
}

// AlterUserSCRAMs is an upsert: a second run with the same users succeeds
// and leaves one credential per user, with the new password. Kafka's
// behaviour, which kfake shares.
func TestUpsertTwiceKeepsOneCredential(t *testing.T) {
	for _, tier := range tiers(t) {
		t.Run(tier.name, func(t *testing.T) {
			o := fresh(t, tier.c)
			o.Iterations = 4096
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, adm, err := brewkit.Connect(ctx, tier.c.Admin)
			require.NoError(t, err)
			defer adm.Close()
			for range 2 {
				require.NoError(t, users.Upsert(ctx, adm, o.Iterations, o.Partner, o.Password))
			}
			// Any broker answers DescribeUserSCRAMs from its copy of the
			// metadata log, which may not hold the upsert yet.
			have := listed(ctx, t, adm, func(us []users.User) bool { return len(only(users.Result{Users: us}, o.Partner)) > 0 })
			require.Equal(t, []users.User{{Name: o.Partner, Mechanism: "SCRAM-SHA-512", Iterations: 4096}},
				only(users.Result{Users: have}, o.Partner))
		})
	}
}

// -delete removes the users, and a second -delete finds them gone.
func TestDeleteTwice(t *testing.T) {
	for _, tier := range tiers(t) {
		t.Run(tier.name, func(t *testing.T) {
			o := fresh(t, tier.c)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, adm, err := brewkit.Connect(ctx, tier.c.Admin)
			require.NoError(t, err)
			defer adm.Close()
			require.NoError(t, users.Upsert(ctx, adm, 4096, o.Partner, o.Password, o.Analytics, o.AnalyticsPassword))
			ds, err := users.Delete(ctx, tier.c, o.Partner, o.Analytics)
			require.NoError(t, err)
			require.Equal(t, []users.Deleted{{User: o.Partner, Existed: true}, {User: o.Analytics, Existed: true}}, ds)
			ds, err = users.Delete(ctx, tier.c, o.Partner, o.Analytics)
			require.NoError(t, err)
			require.Equal(t, []users.Deleted{{User: o.Partner}, {User: o.Analytics}}, ds)
			have := listed(ctx, t, adm, func(us []users.User) bool {
				return len(only(users.Result{Users: us}, o.Partner, o.Analytics)) == 0
			})
			require.Empty(t, only(users.Result{Users: have}, o.Partner, o.Analytics))
		})
	}
}

// listed is users.List once it satisfies done, or its last answer after 10 s:
// the broker that answers applies the controller's records a moment after the
// write returns.
func listed(ctx context.Context, t *testing.T, adm *kadm.Client, done func([]users.User) bool) []users.User {
	t.Helper()
	var have []users.User
	var err error
	_ = brewkit.WaitFor(ctx, 10*time.Second, 50*time.Millisecond, func() bool {
		have, err = users.List(ctx, adm)
		return err != nil || done(have)
	})
	require.NoError(t, err)
	return have
}

type tier struct {
	name string
	c    secure.Cluster
}

// tiers are the simulation, and the real stand when the tests run on one.
func tiers(t *testing.T) []tier {
	t.Helper()
	out := []tier{{"simulation", simulated(t)}}
	if os.Getenv(brewkit.EnvBootstrap) != "" || brewtest.RequireRealSet() {
		_, c := realCluster(t)
		out = append(out, tier{"real", c})
	}
	return out
}

// On the simulation (kfake with SASL and ACLs) the same run: users created
// and listed, the partner logs in and is refused its read, the rotation
// refuses the old password on new connections and keeps the old connection.
// What kfake does differently, asserted so that a change shows: a wrong
// password is a dropped connection (EOF), not SASL_AUTHENTICATION_FAILED,
// which brewkit.Ping still names a refused login; there is no TLS to forget;
// and kfake announces 4096 iterations whatever the credential has, so a user
// made with more cannot log in there: the simulation's users have 4096.
func TestUsersOnTheSimulation(t *testing.T) {
	c := simulated(t)
	o := fresh(t, c)
	o.Iterations = 4096
	r := run(t, c, o)

	require.Equal(t, []users.User{
		{Name: o.Analytics, Mechanism: "SCRAM-SHA-512", Iterations: 4096},
		{Name: "brew", Mechanism: "SCRAM-SHA-512", Iterations: 4096},
		{Name: o.Partner, Mechanism: "SCRAM-SHA-512", Iterations: 4096},
	}, only(r, "brew", o.Partner, o.Analytics))
	require.Len(t, r.Partner.Brokers, 3)
	require.Zero(t, r.Partner.ACLs)
	require.Zero(t, r.Partner.Topics)
	require.Positive(t, r.Partner.All)
	require.ErrorIs(t, r.Partner.ReadErr, kerr.TopicAuthorizationFailed)

	require.ErrorIs(t, r.Wrong.Raw, io.EOF, "kfake drops a refused login")
	var login *brewkit.LoginError
	require.ErrorAs(t, r.Wrong.Diagnosis, &login)
	require.ErrorAs(t, r.NoSASL.Diagnosis, &login)
	require.Contains(t, login.Error(), "wants a SASL login")
	require.Nil(t, r.NoTLS)

	rot := r.Rotation
	require.ErrorAs(t, rot.OldLogin, &login)
	require.NoError(t, rot.NewLogin)
	require.NoError(t, rot.Stale)
	require.Zero(t, rot.StaleDials)
	require.Error(t, rot.Other)
	require.Equal(t, "0", rot.ReauthMs)

	// kfake's server-first message names 4096 iterations whatever the
	// credential holds: a user made with 8192 cannot log in there.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, adm, err := brewkit.Connect(ctx, c.Admin)
	require.NoError(t, err)
	defer adm.Close()
	require.NoError(t, users.Upsert(ctx, adm, 8192, o.Analytics, o.AnalyticsPassword))
	cfg, err := c.Password(o.Analytics, o.AnalyticsPassword)
	require.NoError(t, err)
	cl, err := brewkit.NewClient(cfg)
	require.NoError(t, err)
	defer cl.Close()
	require.ErrorAs(t, brewkit.Ping(ctx, cfg, cl), &login, "kfake refuses a SCRAM login of 8192 iterations")

	var b strings.Builder
	users.Print(&b, o, r)
	t.Log("\n" + b.String())
}

package acls_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/brew-course/kafka/lectures/12-security/acls"
	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/sim"
)

// tier is one cluster the behaviour tests run on: the real stand (skipped
// in the fast tier) and kfake with SASL and ACLs on.
type tier struct {
	name string
	get  func(t *testing.T) secure.Cluster
}

var tiers = []tier{{"kafka", realCluster}, {"kfake", simCluster}}

func realCluster(t *testing.T) secure.Cluster {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := secure.Find(ctx, env.Config)
	require.NoError(t, err)
	return c
}

// simCluster is kfake with a SASL login on every node and ACLs enforced
// (sim's Denied turns kfake's ACLs on): its super user is the operator.
func simCluster(t *testing.T) secure.Cluster {
	env := brewtest.SimWith(t, sim.Options{
		Login:  &sim.Login{User: "brew", Pass: "brew-secret", Mechanism: secure.Mechanism},
		Denied: &sim.Login{User: "nobody", Pass: "nobody-secret", Mechanism: secure.Mechanism},
	})
	return secure.Simulated(env.Config)
}

// fresh are names of the test's own: users, topics (created by Run's
// EnsureTopics), groups, a transactional id; everything they got is
// deleted when the test ends.
func fresh(t *testing.T, c secure.Cluster) (acls.Names, acls.Options) {
	sfx := fmt.Sprintf("%06d", rand.IntN(1e6))
	b := "brew.test.acl" + sfx + "."
	n := acls.Names{
		Partner: "partner-" + sfx, PartnerPass: "partner-pass-" + sfx,
		Analytics: "analytics-" + sfx, AnalyticsPass: "analytics-pass-" + sfx,
		Writer: "order-service-" + sfx, WriterPass: "writer-pass-" + sfx,
		Shipments: b + "shipments.v1", Orders: b + "orders.v1", Payments: b + "payments.v1",
		OrdersPrefix: b + "orders", PaymentsPrefix: b + "payments",
		PartnerGroup: b + "partner.courier", OtherGroup: b + "courier",
		AnalyticsPrefix: b + "analytics.", OrdersGroup: b + "analytics.revenue", PaymentsGroup: b + "analytics.payments",
		TxnID: b + "order-service", Scratch: b + "analytics.scratch",
	}
	o := acls.Defaults
	o.Topics = []brewkit.Topic{brewkit.TopicNamed(n.Shipments, 3), brewkit.TopicNamed(n.Orders, 3), brewkit.TopicNamed(n.Payments, 3)}
	t.Cleanup(func() { drop(t, c, n, n.Partner, n.Analytics, n.Writer) })
	return n, o
}

// drop deletes the users' ACLs and credentials, n's topics and groups.
func drop(t *testing.T, c secure.Cluster, n acls.Names, users ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := brewkit.NewClient(c.Admin)
	if err != nil {
		t.Error(err)
		return
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var dels []kadm.DeleteSCRAM
	for _, u := range users {
		p := secure.Principal(u)
		b := kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).Allow(p).AllowHosts().Deny(p).DenyHosts().Operations()
		if _, err := adm.DeleteACLs(ctx, b); err != nil {
			t.Errorf("deleting %s's ACLs: %v", p, err)
		}
		dels = append(dels, kadm.DeleteSCRAM{User: u, Mechanism: kadm.ScramSha512})
	}
	if res, err := adm.AlterUserSCRAMs(ctx, dels, nil); err != nil {
		t.Errorf("deleting the users: %v", err)
	} else {
		res.EachError(func(a kadm.AlteredUserSCRAM) {
			if !errors.Is(a.Err, kerr.ResourceNotFound) {
				t.Errorf("deleting %s: %v", a.User, a.Err)
			}
		})
	}
	adm.DeleteGroups(ctx, n.PartnerGroup, n.OrdersGroup, n.PaymentsGroup) //nolint:errcheck // best effort
	adm.DeleteTopics(ctx, n.Shipments, n.Orders, n.Payments)              //nolint:errcheck // best effort
}

// lecture writes a run's names as the lecture's, longest first (a prefix
// is part of its topics' names).
func lecture(n acls.Names) *strings.Replacer {
	pairs := [][2]string{
		{n.Partner, acls.Lecture.Partner}, {n.Analytics, acls.Lecture.Analytics}, {n.Writer, acls.Lecture.Writer},
		{n.Shipments, acls.Lecture.Shipments}, {n.Orders, acls.Lecture.Orders}, {n.Payments, acls.Lecture.Payments},
		{n.OrdersPrefix, acls.Lecture.OrdersPrefix}, {n.PaymentsPrefix, acls.Lecture.PaymentsPrefix},
		{n.PartnerGroup, acls.Lecture.PartnerGroup}, {n.OtherGroup, acls.Lecture.OtherGroup},
		{n.OrdersGroup, acls.Lecture.OrdersGroup}, {n.PaymentsGroup, acls.Lecture.PaymentsGroup},
		{n.AnalyticsPrefix, acls.Lecture.AnalyticsPrefix}, {n.TxnID, acls.Lecture.TxnID}, {n.Scratch, acls.Lecture.Scratch},
	}
	sort.SliceStable(pairs, func(i, j int) bool { return len(pairs[i][0]) > len(pairs[j][0]) })
	var args []string
	for _, p := range pairs {
		args = append(args, p[0], p[1])
	}
	return strings.NewReplacer(args...)
}

// wants are the answers least privilege means, row by row, with the error
// each denial must be (errors.Is).
var wants = []struct {
	who, action string
	want        error
}{
	{"partner", "consume in group brew.partner.courier", nil},
	{"partner", "produce", kerr.ClusterAuthorizationFailed},
	{"partner", "produce, idempotence off", kerr.TopicAuthorizationFailed},
	{"partner", "consume in group brew.partner.courier", kerr.TopicAuthorizationFailed},
	{"partner", "consume in group brew.courier", kerr.GroupAuthorizationFailed},
	{"analytics", "consume in group brew.analytics.revenue", nil},
	{"analytics", "consume in group brew.analytics.payments", nil},
	{"analytics", "produce, idempotence off", kerr.TopicAuthorizationFailed},
	{"analytics", "create a topic", kerr.TopicAuthorizationFailed},
	{"analytics", "describe broker configs", kerr.ClusterAuthorizationFailed},
	{"analytics", "alter broker configs (validate only)", kerr.ClusterAuthorizationFailed},
	{"analytics", "list ACLs", kerr.ClusterAuthorizationFailed},
	{"analytics", "grant itself WRITE on brew.orders.v1", kerr.ClusterAuthorizationFailed},
	{"analytics", "set User:partner's password", kerr.ClusterAuthorizationFailed},
	{"order-service", "transaction, no ACL on its id", kerr.TransactionalIDAuthorizationFailed},
	{"order-service", "transaction, WRITE+DESCRIBE on its id", nil},
}

// checkRows asserts every row's answer, as the lecture's names show them.
func checkRows(t *testing.T, n acls.Names, rep acls.Report, differs map[int]error) {
	t.Helper()
	names := lecture(n)
	require.Len(t, rep.Rows, len(wants))
	for i, w := range wants {
		r := rep.Rows[i]
		require.Equal(t, "User:"+w.who, names.Replace(r.Who), "row %d", i)
		require.Equal(t, w.action, names.Replace(r.Action), "row %d", i)
		want := w.want
		if d, ok := differs[i]; ok {
			want = d
		}
		if want == nil {
			require.NoError(t, r.Err, "row %d: %s %s on %s", i, r.Who, r.Action, r.Resource)
			continue
		}
		require.ErrorIs(t, r.Err, want, "row %d: %s %s on %s", i, r.Who, r.Action, r.Resource)
	}
}

// On real Kafka every grant works and every denial is the error least
// privilege means; the run prints what the README shows; a second run
// creates nothing and answers the same.
func TestLeastPrivilegeReadme(t *testing.T) {
	c := realCluster(t)
	n, o := fresh(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	rep, err := acls.Run(ctx, c, n, o)
	require.NoError(t, err)
	t.Logf("first run: %s", time.Since(start).Round(time.Millisecond))
	checkRows(t, n, rep, nil)
	require.Empty(t, rep.Mismatches())
	require.ElementsMatch(t, []string{n.Partner, n.Analytics, n.Writer}, rep.UsersCreated)
	require.Equal(t, 10, rep.ACLs)
	require.Equal(t, 10, rep.ACLsCreated)

	var b strings.Builder
	acls.PrintReport(&b, rep)
	out := lecture(n).Replace(b.String())
	t.Log("\n" + out)
	brewtest.MatchesReadme(t, "../README.md", "acls", out)

	start = time.Now()
	again, err := acls.Run(ctx, c, n, o)
	require.NoError(t, err)
	t.Logf("second run: %s", time.Since(start).Round(time.Millisecond))
	require.Empty(t, again.UsersCreated)
	require.Empty(t, again.UsersReset)
	require.Zero(t, again.ACLsCreated)
	checkRows(t, n, again, nil)
}

// kfake enforces ACLs the way Kafka does for each of the lecture's checks.
func TestLeastPrivilegeOnTheSimulation(t *testing.T) {
	c := simCluster(t)
	n, o := fresh(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := acls.Run(ctx, c, n, o)
	require.NoError(t, err)
	var b strings.Builder
	acls.PrintReport(&b, rep)
	t.Log("\n" + lecture(n).Replace(b.String()))
	checkRows(t, n, rep, nil)
}

// The error codes the README's table names, and how a row shows an answer
// other than least privilege's (the program then exits 1).
func TestReportNamesErrorsAndMismatches(t *testing.T) {
	for code, err := range map[int16]*kerr.Error{
		29: kerr.TopicAuthorizationFailed, 30: kerr.GroupAuthorizationFailed,
		31: kerr.ClusterAuthorizationFailed, 53: kerr.TransactionalIDAuthorizationFailed,
	} {
		require.Equal(t, code, err.Code, err.Message)
		require.Equal(t, err.Message, acls.ErrorName(fmt.Errorf("reading: %w", err)))
	}
	require.Equal(t, "OK", acls.ErrorName(nil))

	rep := acls.Report{Users: []string{"partner"}, Mechanism: "SCRAM-SHA-512", TLS: true, Rows: []acls.Row{
		{Who: "User:partner", Action: "produce", Resource: "topic brew.shipments.v1", Want: "CLUSTER_AUTHORIZATION_FAILED", Got: "OK"},
		{Who: "User:partner", Action: "consume", Resource: "topic brew.shipments.v1", Want: "OK", Got: "OK"},
	}}
	require.Len(t, rep.Mismatches(), 1)
	var b strings.Builder
	acls.PrintReport(&b, rep)
	require.Contains(t, b.String(), "User:partner  produce  topic brew.shipments.v1  OK (least privilege: CLUSTER_AUTHORIZATION_FAILED)\n")
}

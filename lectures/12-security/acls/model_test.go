package acls_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/lectures/12-security/acls"
	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// model is a test's cluster for the ACL model's claims: the operator, a
// topic of its own with one record, and users made on demand.
type model struct {
	t      *testing.T
	c      secure.Cluster
	op     *kgo.Client
	sfx    string
	topic  string // the test's topic, with one record
	users  []string
	groups []string
}

func newModel(t *testing.T, c secure.Cluster) *model {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := &model{t: t, c: c, sfx: fmt.Sprintf("%06d", rand.IntN(1e6))}
	op, adm, err := brewkit.Connect(ctx, c.Admin)
	require.NoError(t, err)
	t.Cleanup(op.Close)
	m.op = op
	m.topic = m.name("topic")
	_, err = brewkit.EnsureTopics(ctx, adm, brewkit.TopicNamed(m.topic, 1))
	require.NoError(t, err)
	t.Cleanup(func() {
		drop(t, c, acls.Names{PartnerGroup: m.name("x"), OrdersGroup: m.name("y"), PaymentsGroup: m.name("z"),
			Shipments: m.topic, Orders: m.name("a"), Payments: m.name("b")}, m.users...)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		adm.DeleteGroups(ctx, m.groups...) //nolint:errcheck // best effort
	})
	require.NoError(t, op.ProduceSync(ctx, brewkit.Event{Type: brewkit.OrderPlaced, V: brewkit.EventVersion, OrderID: "ord-0000001"}.Record(m.topic)).FirstErr())
	return m
}

// name is a name of the test's own: brew.test.aclmodel<sfx>.what.
func (m *model) name(what string) string { return "brew.test.aclmodel" + m.sfx + "." + what }

// user creates a user of the test's own with grants (User filled in), and
// waits until every node has its ACLs.
func (m *model) user(what string, grants ...acls.Grant) brewkit.Config {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u := what + "-" + m.sfx
	m.users = append(m.users, u)
	cfg, err := m.c.Password(u, "pass-"+u)
	require.NoError(m.t, err)
	_, _, err = acls.EnsureUsers(ctx, kadm.NewClient(m.op), map[string]brewkit.Config{u: cfg}, map[string]string{u: "pass-" + u})
	require.NoError(m.t, err)
	for i := range grants {
		grants[i].User = u
	}
	_, err = acls.Ensure(ctx, m.op, grants...)
	require.NoError(m.t, err)
	return cfg
}

// consume is acls.Consume of m.topic (or topic) in group, until the first
// record or error.
func (m *model) consume(cfg brewkit.Config, group string, topic ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	m.groups = append(m.groups, group)
	t := m.topic
	if len(topic) > 0 {
		t = topic[0]
	}
	start := time.Now()
	defer func() {
		m.t.Logf("%s consuming %s in %s: %s", cfg.User, t, group, time.Since(start).Round(time.Millisecond))
	}()
	return acls.Consume(ctx, cfg, group, t, nil)
}

func grant(typ kmsg.ACLResourceType, pattern kmsg.ACLResourcePatternType, name string, ops ...kmsg.ACLOperation) acls.Grant {
	return acls.Grant{Type: typ, Pattern: pattern, Names: []string{name}, Ops: ops}
}

var (
	topic, group       = kmsg.ACLResourceTypeTopic, kmsg.ACLResourceTypeGroup
	literal, prefixed  = kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed
	read, describe, wr = kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationWrite
)

// A consumer in a group needs READ on the topic and READ on the group, and
// nothing else (READ implies DESCRIBE); DESCRIBE on the topic is not
// enough to fetch, and either READ alone fails with its resource's error.
func TestGroupConsumerNeedsTopicReadAndGroupRead(t *testing.T) {
	for _, tr := range tiers {
		t.Run(tr.name, func(t *testing.T) {
			m := newModel(t, tr.get(t))
			g := m.name("group")
			both := m.user("both", grant(topic, literal, m.topic, read), grant(group, literal, g, read))
			require.NoError(t, m.consume(both, g))

			topicOnly := m.user("topiconly", grant(topic, literal, m.topic, read))
			require.ErrorIs(t, m.consume(topicOnly, g), kerr.GroupAuthorizationFailed)

			groupOnly := m.user("grouponly", grant(group, literal, g, read))
			require.ErrorIs(t, m.consume(groupOnly, g), kerr.TopicAuthorizationFailed)

			describeOnly := m.user("describeonly", grant(topic, literal, m.topic, describe), grant(group, literal, g, read))
			require.ErrorIs(t, m.consume(describeOnly, g), kerr.TopicAuthorizationFailed)
		})
	}
}

// A DENY wins over an ALLOW that matches too: READ allowed on every topic
// by prefix, denied on one literally, is denied on that one only.
func TestDenyWinsOverAllow(t *testing.T) {
	for _, tr := range tiers {
		t.Run(tr.name, func(t *testing.T) {
			m := newModel(t, tr.get(t))
			other := m.name("other")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			adm := kadm.NewClient(m.op)
			_, err := brewkit.EnsureTopics(ctx, adm, brewkit.TopicNamed(other, 1))
			require.NoError(t, err)
			t.Cleanup(func() { adm.DeleteTopics(context.Background(), other) }) //nolint:errcheck // best effort
			require.NoError(t, m.op.ProduceSync(ctx, brewkit.Event{Type: brewkit.OrderPlaced, V: brewkit.EventVersion, OrderID: "ord-0000002"}.Record(other)).FirstErr())
			g := m.name("group")
			cfg := m.user("denied", grant(topic, prefixed, m.name(""), read), grant(group, literal, g, read))

			deny := kadm.NewACLs().Deny(cfg.User).DenyHosts("*").Operations(read).Topics(m.topic).ResourcePatternType(literal)
			deny.PrefixUser()
			rs, err := kadm.NewClient(m.op).CreateACLs(ctx, deny)
			require.NoError(t, err)
			require.NoError(t, rs[0].Err)
			require.NoError(t, acls.WaitBrokers(ctx, m.op, []acls.Binding{{
				Resource: acls.Resource{Type: topic, Name: m.topic, Pattern: literal},
				Entry:    acls.Entry{Principal: secure.Principal(cfg.User), Host: "*", Operation: read, Permission: kmsg.ACLPermissionTypeDeny},
			}}, nil))

			require.ErrorIs(t, m.consume(cfg, g), kerr.TopicAuthorizationFailed, "the DENY on the topic wins")
			require.NoError(t, m.consume(cfg, g, other), "the prefix ALLOW holds elsewhere")
		})
	}
}

// With allow.everyone.if.no.acl.found=false (the stand's, Kafka's default)
// a resource no ACL names is closed to all but the super users: a user
// with no ACLs is refused, the operator (a super user, with no ACLs either)
// is not.
func TestNoACLNoAccess(t *testing.T) {
	for _, tr := range tiers {
		t.Run(tr.name, func(t *testing.T) {
			m := newModel(t, tr.get(t))
			nobody := m.user("noacl")
			require.ErrorIs(t, m.consume(nobody, m.name("group")), kerr.TopicAuthorizationFailed)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.ErrorIs(t, acls.Produce(ctx, nobody, m.topic, false), kerr.TopicAuthorizationFailed)

			operator := m.c.Admin
			require.NoError(t, m.consume(operator, m.name("opgroup")), "a super user needs no ACL")
			mine, err := acls.List(ctx, m.op, nil)
			require.NoError(t, err)
			for _, b := range mine {
				require.NotContains(t, []string{b.Resource.Name}, m.topic, "no ACL names the test's topic")
			}
		})
	}
}

// Lecture 07's transactional producer needs WRITE on its transactional id
// (which implies DESCRIBE) and WRITE on the topics it writes; without the
// first its transaction fails on the id, without the second on the topic.
func TestTransactionNeedsWriteOnItsIDAndTopic(t *testing.T) {
	for _, tr := range tiers {
		t.Run(tr.name, func(t *testing.T) {
			m := newModel(t, tr.get(t))
			n := acls.Names{TxnID: m.name("txn"), Orders: m.topic, Payments: m.topic}
			txn := kmsg.ACLResourceTypeTransactionalId
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			both := m.user("txnboth", grant(topic, literal, m.topic, wr), grant(txn, literal, n.TxnID, wr))
			require.NoError(t, acls.Transaction(ctx, both, n))
			noID := m.user("txnnoid", grant(topic, literal, m.topic, wr))
			require.ErrorIs(t, acls.Transaction(ctx, noID, n), kerr.TransactionalIDAuthorizationFailed)
			noTopic := m.user("txnnotopic", grant(txn, literal, n.TxnID, wr))
			require.ErrorIs(t, acls.Transaction(ctx, noTopic, n), kerr.TopicAuthorizationFailed)
		})
	}
}

// A user's metadata lists only the topics it may DESCRIBE, without an
// error: the rest of the cluster is invisible to it.
func TestMetadataShowsOnlyDescribableTopics(t *testing.T) {
	for _, tr := range tiers {
		t.Run(tr.name, func(t *testing.T) {
			m := newModel(t, tr.get(t))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			outside := "brew.test.aclmodel" + m.sfx + "-outside" // not under the prefix
			adm := kadm.NewClient(m.op)
			_, err := brewkit.EnsureTopics(ctx, adm, brewkit.TopicNamed(outside, 1))
			require.NoError(t, err)
			t.Cleanup(func() { adm.DeleteTopics(context.Background(), outside) }) //nolint:errcheck // best effort
			cfg := m.user("lister", grant(topic, prefixed, m.name(""), read))
			cl, err := brewkit.NewClient(cfg)
			require.NoError(t, err)
			defer cl.Close()
			seen, err := kadm.NewClient(cl).ListTopics(ctx)
			require.NoError(t, err)
			require.Equal(t, []string{m.topic}, seen.Names())
			all, err := kadm.NewClient(m.op).ListTopics(ctx)
			require.NoError(t, err)
			require.Contains(t, all.Names(), outside, "the operator sees it")
		})
	}
}

// Delete removes exactly the lecture's ACLs, and a second Delete finds none.
func TestDeleteRemovesTheACLs(t *testing.T) {
	for _, tr := range tiers {
		t.Run(tr.name, func(t *testing.T) {
			c := tr.get(t)
			n, _ := fresh(t, c)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			op, _, err := brewkit.Connect(ctx, c.Admin)
			require.NoError(t, err)
			defer op.Close()
			created, err := acls.Ensure(ctx, op, n.All()...)
			require.NoError(t, err)
			require.Equal(t, 12, created)
			again, err := acls.Ensure(ctx, op, n.All()...)
			require.NoError(t, err)
			require.Zero(t, again, "Ensure is idempotent")

			deleted, err := acls.Delete(ctx, op, n.All()...)
			require.NoError(t, err)
			require.Equal(t, 12, deleted)
			left, err := acls.List(ctx, op, nil)
			require.NoError(t, err)
			for _, b := range bindingsOf(n.All()) {
				require.NotContains(t, left, b)
			}
			deleted, err = acls.Delete(ctx, op, n.All()...)
			require.NoError(t, err)
			require.Zero(t, deleted)
		})
	}
}

func bindingsOf(gs []acls.Grant) []acls.Binding {
	var out []acls.Binding
	for _, g := range gs {
		out = append(out, g.Bindings()...)
	}
	return out
}

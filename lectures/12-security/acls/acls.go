// Package acls gives Brew's two outside systems least privilege and proves it
// on the cluster: the courier partner reads brew.shipments.v1 in its own
// group and nothing else; the analytics contractor reads the orders and the
// payments (prefix ACLs on topics and groups) and writes nothing; lecture 07's
// transactional producer, as User:order-service, needs ACLs on its
// transactional id. The operator, a super user, creates the users and the
// ACLs idempotently; then every grant and every denial runs for real, each
// with the error Kafka answers.
package acls

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Names are the users, topics, groups and the transactional id of a run.
type Names struct {
	Partner, Analytics, Writer             string // users
	PartnerPass, AnalyticsPass, WriterPass string

	Shipments        string // the topic the partner reads
	Orders, Payments string // topics analytics reads and the writer writes
	// OrdersPrefix and PaymentsPrefix are analytics' topic prefixes.
	OrdersPrefix, PaymentsPrefix string

	PartnerGroup string // the partner's own group
	OtherGroup   string // a group the partner may not use: Brew's own courier service's
	// AnalyticsPrefix is the prefix of analytics' groups; OrdersGroup and
	// PaymentsGroup are two groups under it.
	AnalyticsPrefix, OrdersGroup, PaymentsGroup string

	TxnID   string // the writer's transactional id (lecture 07's producer)
	Scratch string // the topic analytics tries to create
}

// Writer is the user lecture 07's transactional producer runs as here.
const Writer = "order-service"

// Lecture are the lecture's names.
var Lecture = Names{
	Partner: secure.Partner, PartnerPass: secure.PartnerPassword,
	Analytics: secure.Analytics, AnalyticsPass: secure.AnalyticsPassword,
	Writer: Writer, WriterPass: "order-service-secret",

	Shipments: brewkit.Shipments.Name, Orders: brewkit.Orders.Name, Payments: brewkit.Payments.Name,
	OrdersPrefix: "brew.orders", PaymentsPrefix: "brew.payments",

	PartnerGroup: "brew.partner.courier", OtherGroup: "brew.courier",
	AnalyticsPrefix: "brew.analytics.", OrdersGroup: "brew.analytics.revenue", PaymentsGroup: "brew.analytics.payments",

	TxnID:   "brew.order-service",
	Scratch: "brew.analytics.scratch",
}

// Grant is a set of ALLOW ACLs of one user on resources of one type and
// pattern: every operation on every name, from any host.
type Grant struct {
	User    string
	Type    kmsg.ACLResourceType
	Pattern kmsg.ACLResourcePatternType
	Names   []string
	Ops     []kmsg.ACLOperation
}

// Builder is g as kadm's ACL builder, for CreateACLs and DeleteACLs.
func (g Grant) Builder() *kadm.ACLBuilder {
	b := kadm.NewACLs().Allow(secure.Principal(g.User)).AllowHosts("*").Operations(g.Ops...).ResourcePatternType(g.Pattern)
	switch g.Type {
	case kmsg.ACLResourceTypeTopic:
		b.Topics(g.Names...)
	case kmsg.ACLResourceTypeGroup:
		b.Groups(g.Names...)
	case kmsg.ACLResourceTypeTransactionalId:
		b.TransactionalIDs(g.Names...)
	default:
		panic(fmt.Sprintf("acl: no grants on %s", g.Type))
	}
	return b
}

// Bindings are g's ACLs one by one.
func (g Grant) Bindings() []Binding {
	var out []Binding
	for _, name := range g.Names {
		for _, op := range g.Ops {
			out = append(out, Binding{
				Resource: Resource{Type: g.Type, Name: name, Pattern: g.Pattern},
				Entry:    Entry{Principal: secure.Principal(g.User), Host: "*", Operation: op, Permission: kmsg.ACLPermissionTypeAllow},
			})
		}
	}
	return out
}

var (
	read, describe, write = kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationWrite
	topic, group, txnID   = kmsg.ACLResourceTypeTopic, kmsg.ACLResourceTypeGroup, kmsg.ACLResourceTypeTransactionalId
	literal, prefixed     = kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed
)

// Plan is the least-privilege set of the partner, analytics and the
// writer's topics; the writer's transactional id comes later (TxnGrant).
func (n Names) Plan() []Grant {
	return []Grant{
		{User: n.Partner, Type: topic, Pattern: literal, Names: []string{n.Shipments}, Ops: []kmsg.ACLOperation{read, describe}},
		{User: n.Partner, Type: group, Pattern: literal, Names: []string{n.PartnerGroup}, Ops: []kmsg.ACLOperation{read}},
		{User: n.Analytics, Type: topic, Pattern: prefixed, Names: []string{n.OrdersPrefix, n.PaymentsPrefix}, Ops: []kmsg.ACLOperation{read, describe}},
		{User: n.Analytics, Type: group, Pattern: prefixed, Names: []string{n.AnalyticsPrefix}, Ops: []kmsg.ACLOperation{read}},
		{User: n.Writer, Type: topic, Pattern: literal, Names: []string{n.Orders, n.Payments}, Ops: []kmsg.ACLOperation{write}},
	}
}

// TxnGrant is what the writer's transactional id needs: WRITE and DESCRIBE.
func (n Names) TxnGrant() Grant {
	return Grant{User: n.Writer, Type: txnID, Pattern: literal, Names: []string{n.TxnID}, Ops: []kmsg.ACLOperation{write, describe}}
}

// All is every ACL the lecture creates.
func (n Names) All() []Grant { return append(n.Plan(), n.TxnGrant()) }

func bindings(gs ...Grant) []Binding {
	var out []Binding
	for _, g := range gs {
		out = append(out, g.Bindings()...)
	}
	return out
}

// Options set up a run.
type Options struct {
	// Timeout bounds each check: a grant that reads nothing in it fails.
	Timeout time.Duration
	// Topics are the topics the operator makes sure of (the Brew topics).
	Topics []brewkit.Topic
}

// Defaults are the lecture's run.
var Defaults = Options{Timeout: 15 * time.Second, Topics: brewkit.Catalog}

// Run has the operator make sure of the topics, the users and Plan's ACLs,
// then runs every check as its user: each grant and each denial, and the
// writer's transaction without and with the ACLs on its transactional id.
// A check whose answer differs from least privilege is a row too; Run
// returns an error only when it cannot run the checks.
func Run(ctx context.Context, c secure.Cluster, n Names, o Options) (Report, error) {
	rep := Report{Users: []string{n.Partner, n.Analytics, n.Writer}}
	op, adm, err := brewkit.Connect(ctx, c.Admin)
	if err != nil {
		return rep, err
	}
	defer op.Close()
	if _, err := brewkit.EnsureTopics(ctx, adm, o.Topics...); err != nil {
		return rep, err
	}

	logins := map[string]brewkit.Config{}
	for _, u := range []struct{ user, pass string }{{n.Partner, n.PartnerPass}, {n.Analytics, n.AnalyticsPass}, {n.Writer, n.WriterPass}} {
		cfg, err := c.Password(u.user, u.pass)
		if err != nil {
			return rep, err
		}
		logins[u.user] = cfg
		rep.Mechanism, rep.TLS = cfg.SASL, cfg.TLS
	}
	if rep.UsersCreated, rep.UsersReset, err = EnsureUsers(ctx, adm, logins, passwords(n)); err != nil {
		return rep, err
	}

	created, err := Ensure(ctx, op, n.Plan()...)
	if err != nil {
		return rep, err
	}
	rep.ACLs, rep.ACLsCreated = len(bindings(n.Plan()...)), created

	// What the grants read: one record each, which the operator writes
	// and points the group at, so a grant reads one record, not a topic's
	// history.
	shipment, err := mark(ctx, op, adm, n.Shipments, n.PartnerGroup, brewkit.OrderDelivered)
	if err != nil {
		return rep, err
	}
	order, err := mark(ctx, op, adm, n.Orders, n.OrdersGroup, brewkit.OrderPlaced)
	if err != nil {
		return rep, err
	}
	payment, err := mark(ctx, op, adm, n.Payments, n.PaymentsGroup, brewkit.PaymentReceived)
	if err != nil {
		return rep, err
	}

	ch := &checks{n: n, logins: logins, timeout: o.Timeout, rep: &rep}
	ch.partner(ctx, shipment)
	ch.analytics(ctx, order, payment)
	if err := ch.writer(ctx, op); err != nil {
		return rep, err
	}
	return rep, ctx.Err()
}

// checks are what one Run's checks share: the names, each user's login,
// the bound of one check, and the report each answer goes to.
type checks struct {
	n       Names
	logins  map[string]brewkit.Config
	timeout time.Duration
	rep     *Report
}

// partner is the courier partner's checks: it reads its topic in its own
// group, and neither writes nor reads another topic nor uses another group.
func (ch *checks) partner(ctx context.Context, shipment *kgo.Record) {
	n, login, pp := ch.n, ch.logins[ch.n.Partner], secure.Principal(ch.n.Partner)
	ch.check(ctx, pp, "consume in group "+n.PartnerGroup, topicRes(n.Shipments), nil,
		func(ctx context.Context) error { return Consume(ctx, login, n.PartnerGroup, n.Shipments, shipment) })
	ch.check(ctx, pp, "produce", topicRes(n.Shipments), kerr.ClusterAuthorizationFailed,
		func(ctx context.Context) error { return Produce(ctx, login, n.Shipments, true) })
	ch.check(ctx, pp, "produce, idempotence off", topicRes(n.Shipments), kerr.TopicAuthorizationFailed,
		func(ctx context.Context) error { return Produce(ctx, login, n.Shipments, false) })
	ch.check(ctx, pp, "consume in group "+n.PartnerGroup, topicRes(n.Orders), kerr.TopicAuthorizationFailed,
		func(ctx context.Context) error { return Consume(ctx, login, n.PartnerGroup, n.Orders, nil) })
	ch.check(ctx, pp, "consume in group "+n.OtherGroup, groupRes(n.OtherGroup), kerr.GroupAuthorizationFailed,
		func(ctx context.Context) error { return Consume(ctx, login, n.OtherGroup, n.Shipments, nil) })
}

// analytics is the analytics contractor's checks: it reads the orders and
// the payments in groups of its prefix, and writes nothing and makes none
// of the admin requests of AdminCalls.
func (ch *checks) analytics(ctx context.Context, order, payment *kgo.Record) {
	n, login, ap := ch.n, ch.logins[ch.n.Analytics], secure.Principal(ch.n.Analytics)
	ch.check(ctx, ap, "consume in group "+n.OrdersGroup, topicRes(n.Orders), nil,
		func(ctx context.Context) error { return Consume(ctx, login, n.OrdersGroup, n.Orders, order) })
	ch.check(ctx, ap, "consume in group "+n.PaymentsGroup, topicRes(n.Payments), nil,
		func(ctx context.Context) error { return Consume(ctx, login, n.PaymentsGroup, n.Payments, payment) })
	ch.check(ctx, ap, "produce, idempotence off", topicRes(n.Orders), kerr.TopicAuthorizationFailed,
		func(ctx context.Context) error { return Produce(ctx, login, n.Orders, false) })
	for _, a := range AdminCalls(n) {
		ch.check(ctx, ap, a.Action, a.Resource, a.Want, func(ctx context.Context) error { return a.Call(ctx, login) })
	}
}

// writer is lecture 07's producer: without ACLs on its transactional id,
// then with. The operator op deletes and creates them.
func (ch *checks) writer(ctx context.Context, op *kgo.Client) error {
	n, login, wp := ch.n, ch.logins[ch.n.Writer], secure.Principal(ch.n.Writer)
	if _, err := Delete(ctx, op, n.TxnGrant()); err != nil {
		return err
	}
	tr := "transactional id " + n.TxnID
	ch.check(ctx, wp, "transaction, no ACL on its id", tr, kerr.TransactionalIDAuthorizationFailed,
		func(ctx context.Context) error { return Transaction(ctx, login, n) })
	if _, err := Ensure(ctx, op, n.TxnGrant()); err != nil {
		return err
	}
	ch.check(ctx, wp, "transaction, WRITE+DESCRIBE on its id", tr, nil,
		func(ctx context.Context) error { return Transaction(ctx, login, n) })
	return nil
}

func passwords(n Names) map[string]string {
	return map[string]string{n.Partner: n.PartnerPass, n.Analytics: n.AnalyticsPass, n.Writer: n.WriterPass}
}

// mark writes one event to topic as the operator and commits group's
// offsets so that its next consumer starts at that record: the end of
// every other partition, the record's own offset on its partition.
func mark(ctx context.Context, op *kgo.Client, adm *kadm.Client, topic, group string, kind brewkit.EventType) (*kgo.Record, error) {
	rec := event(kind).Record(topic)
	if err := op.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return nil, fmt.Errorf("operator writing to %s: %w", topic, err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("operator listing %s's end offsets: %w", topic, err)
	}
	offsets := kadm.Offsets{}
	ends.Each(func(l kadm.ListedOffset) {
		at := l.Offset
		if l.Partition == rec.Partition {
			at = rec.Offset
		}
		offsets.AddOffset(topic, l.Partition, at, -1)
	})
	committed, err := adm.CommitOffsets(ctx, group, offsets)
	if err == nil {
		err = committed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("operator pointing group %s at its record in %s (is a consumer of it still running?): %w", group, topic, err)
	}
	return rec, nil
}

// Consume reads topic as cfg's user in group until it has the record at
// want's partition and offset, and commits its offsets; with want nil, until
// the first record or error.
func Consume(ctx context.Context, cfg brewkit.Config, group, topic string, want *kgo.Record) error {
	// A check waits for one record or an error: a short fetch wait answers
	// sooner (kfake holds a fetch whose only answer is an error for the
	// whole wait; Kafka answers it at once).
	cl, err := brewkit.NewClient(cfg, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.KeepRetryableFetchErrors(), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	var fc brewkit.FetchCheck
	for {
		fs, err := fc.Poll(ctx, cl, 0)
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("no record of %s within the bound: %w", topic, ctx.Err())
		}
		found := false
		fs.EachRecord(func(r *kgo.Record) {
			found = found || want == nil || r.Partition == want.Partition && r.Offset == want.Offset
		})
		if found {
			return cl.CommitUncommittedOffsets(ctx)
		}
	}
}

// event is one Brew event of kind, its order numbered by the clock, marked
// as this program's (Run "acls").
func event(kind brewkit.EventType) brewkit.Event {
	now := time.Now()
	return brewkit.Event{Type: kind, V: brewkit.EventVersion, OrderID: brewkit.OrderID(now.UnixMicro() % 10_000_000),
		ShopID: brewkit.ShopID(1), At: now.UTC(), Cents: 450, Run: "acls"}
}

// Produce writes one record to topic as cfg's user: with the idempotent
// producer (the default, as in every lecture) or without it.
func Produce(ctx context.Context, cfg brewkit.Config, topic string, idempotent bool) error {
	var opts []kgo.Opt
	if !idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	cl, err := brewkit.NewClient(cfg, opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	return cl.ProduceSync(ctx, event(brewkit.OrderPlaced).Record(topic)).FirstErr()
}

// Transaction is lecture 07's transactional producer as cfg's user: an
// order and its payment to two topics in one transaction, committed.
func Transaction(ctx context.Context, cfg brewkit.Config, n Names) error {
	cl, err := brewkit.NewClient(cfg, brewkit.TransactionalID(n.TxnID), kgo.TransactionTimeout(10*time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	order := event(brewkit.OrderPlaced)
	paid := order
	paid.Type = brewkit.PaymentReceived
	res := cl.ProduceSync(ctx, order.Record(n.Orders), paid.Record(n.Payments))
	if err := res.FirstErr(); err != nil {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if cl.AbortBufferedRecords(actx) == nil {
			cl.EndTransaction(actx, kgo.TryAbort) //nolint:errcheck // the write's error is the one to report
		}
		return err
	}
	return cl.EndTransaction(ctx, kgo.TryCommit)
}

// AdminCall is an admin request analytics tries.
type AdminCall struct {
	Action, Resource string
	Want             error
	Call             func(ctx context.Context, cfg brewkit.Config) error
}

// AdminCalls are the admin requests analytics tries, and what Kafka 4.4.0
// answers a user without ACLs on the cluster (measured on the stand).
func AdminCalls(n Names) []AdminCall {
	with := func(fn func(ctx context.Context, adm *kadm.Client) error) func(context.Context, brewkit.Config) error {
		return func(ctx context.Context, cfg brewkit.Config) error {
			cl, err := brewkit.NewClient(cfg)
			if err != nil {
				return err
			}
			defer cl.Close()
			return fn(ctx, kadm.NewClient(cl))
		}
	}
	return []AdminCall{
		{"create a topic", "topic " + n.Scratch, kerr.TopicAuthorizationFailed, with(func(ctx context.Context, adm *kadm.Client) error {
			_, err := adm.CreateTopic(ctx, 1, -1, nil, n.Scratch)
			return err
		})},
		{"describe broker configs", "cluster", kerr.ClusterAuthorizationFailed, with(func(ctx context.Context, adm *kadm.Client) error {
			rc, err := adm.DescribeBrokerConfigs(ctx)
			if err == nil {
				err = firstConfigErr(rc)
			}
			return err
		})},
		{"alter broker configs (validate only)", "cluster", kerr.ClusterAuthorizationFailed, with(func(ctx context.Context, adm *kadm.Client) error {
			rs, err := adm.ValidateAlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.retention.ms", Value: kmsg.StringPtr("1000")}})
			if err == nil {
				for _, r := range rs {
					if r.Err != nil {
						return r.Err
					}
				}
			}
			return err
		})},
		{"list ACLs", "cluster", kerr.ClusterAuthorizationFailed, func(ctx context.Context, cfg brewkit.Config) error {
			cl, err := brewkit.NewClient(cfg)
			if err != nil {
				return err
			}
			defer cl.Close()
			_, err = List(ctx, cl, nil)
			return err
		}},
		{"grant itself WRITE on " + n.Orders, "cluster", kerr.ClusterAuthorizationFailed, with(func(ctx context.Context, adm *kadm.Client) error {
			b := kadm.NewACLs().Allow(secure.Principal(n.Analytics)).Operations(write).Topics(n.Orders).ResourcePatternType(literal)
			rs, err := adm.CreateACLs(ctx, b)
			if err == nil {
				for _, r := range rs {
					if r.Err != nil {
						return r.Err
					}
				}
			}
			return err
		})},
		{"set " + secure.Principal(n.Partner) + "'s password", "cluster", kerr.ClusterAuthorizationFailed, func(ctx context.Context, cfg brewkit.Config) error {
			return with(func(ctx context.Context, adm *kadm.Client) error {
				// The partner's own password: harmless, were it allowed.
				rs, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: n.Partner, Mechanism: scramOf(cfg.SASL), Iterations: iterations, Password: n.PartnerPass}})
				if err == nil {
					err = rs.Error()
				}
				return err
			})(ctx, cfg)
		}},
	}
}

func firstConfigErr(rc kadm.ResourceConfigs) error {
	for _, r := range rc {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

// iterations is the SCRAM iteration count of the users' credentials:
// Kafka's minimum, and the only count kfake's SCRAM login answers with (it
// announces 4096 whatever the credential was stored with).
const iterations = 4096

// scramOf is kadm's mechanism for a SASL mechanism's name.
func scramOf(mechanism string) kadm.ScramMechanism {
	if mechanism == "SCRAM-SHA-256" {
		return kadm.ScramSha256
	}
	return kadm.ScramSha512
}

// EnsureUsers makes sure each user of logins exists with its password:
// a missing one is created, one that exists but refuses the password gets
// it again. It waits until every broker takes each login it changed.
func EnsureUsers(ctx context.Context, adm *kadm.Client, logins map[string]brewkit.Config, pass map[string]string) (created, reset []string, err error) {
	users := slices.Sorted(mapsKeys(logins))
	described, err := adm.DescribeUserSCRAMs(ctx, users...)
	if err != nil {
		return nil, nil, fmt.Errorf("operator describing users: %w", err)
	}
	var upsert []kadm.UpsertSCRAM
	for _, u := range users {
		d, ok := described[u]
		mech := scramOf(logins[u].SASL)
		has := ok && d.Err == nil && slices.ContainsFunc(d.CredInfos, func(ci kadm.CredInfo) bool { return ci.Mechanism == mech })
		switch {
		case !has:
			created = append(created, u)
		case LoginRefused(Login(ctx, logins[u])):
			reset = append(reset, u)
		default:
			continue
		}
		upsert = append(upsert, kadm.UpsertSCRAM{User: u, Mechanism: mech, Iterations: iterations, Password: pass[u]})
	}
	if len(upsert) == 0 {
		return nil, nil, nil
	}
	altered, err := adm.AlterUserSCRAMs(ctx, nil, upsert)
	if err == nil {
		err = altered.Error()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("operator creating users: %w", err)
	}
	for _, u := range upsert {
		if err := WaitLogin(ctx, logins[u.User]); err != nil {
			return nil, nil, err
		}
	}
	return created, reset, nil
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Login is one login of cfg's user on each of its brokers: the first error.
func Login(ctx context.Context, cfg brewkit.Config) error {
	for _, addr := range cfg.Brokers {
		one := cfg
		one.Brokers = []string{addr}
		cl, err := brewkit.NewClient(one)
		if err != nil {
			return err
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = cl.Ping(pctx)
		cancel()
		cl.Close()
		if err != nil {
			return fmt.Errorf("%s logging in on %s: %w", cfg.User, addr, err)
		}
	}
	return nil
}

// LoginRefused reports whether err says the broker refused the login.
func LoginRefused(err error) bool {
	return errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, kerr.IllegalSaslState)
}

// WaitLogin waits until every broker takes cfg's login: a new user's
// credentials reach the brokers through the metadata log.
func WaitLogin(ctx context.Context, cfg brewkit.Config) error {
	var last error
	err := brewkit.WaitFor(ctx, 15*time.Second, 100*time.Millisecond, func() bool {
		last = Login(ctx, cfg)
		return last == nil
	})
	if err != nil && last != nil {
		return last
	}
	return err
}

// Package users is lecture 12's `users` program: the operator creates the
// SCRAM-SHA-512 users of Brew's courier partner and its analytics contractor
// through the admin API, lists them, and then the partner logs in on the
// SASL_SSL listeners with its password, a wrong one, no SASL and no TLS;
// last, the partner's password is rotated and each kind of login is tried
// again, including a connection opened before the rotation.
package users

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Options are what a run creates and tries.
type Options struct {
	Partner, Analytics string // the SCRAM users
	// Password is the partner's password before the rotation, Rotated
	// after it; AnalyticsPassword is analytics'. A local stand's, written
	// here on purpose.
	Password, Rotated, AnalyticsPassword string
	// Iterations of the salted hash the cluster stores (4096 to 16384).
	Iterations int32
	// Topic is what the partner tries to read before any ACL lets it.
	Topic string
	// Settle bounds the wait for every node to take a new credential.
	Settle time.Duration
}

// Defaults are the lecture's users. The partner starts with a password of
// this program's and is rotated to the one the lecture's other programs log
// in with, so a run leaves it as they expect.
var Defaults = Options{
	Partner: secure.Partner, Analytics: secure.Analytics,
	Password: "partner-first-secret", Rotated: secure.PartnerPassword, AnalyticsPassword: secure.AnalyticsPassword,
	Iterations: 8192, Topic: brewkit.Shipments.Name, Settle: 10 * time.Second,
}

// User is one SCRAM credential as DescribeUserSCRAMs lists it.
type User struct {
	Name       string
	Mechanism  string
	Iterations int32
}

// Result is what a run saw.
type Result struct {
	SASL     []string // the listeners the users log in on
	Protocol string   // theirs: SASL_SSL, or SASL_PLAINTEXT on the simulation
	Settled  time.Duration
	Users    []User // every SCRAM credential of the cluster, by user

	Partner Visibility

	Wrong  Attempt  // the partner with a wrong password
	NoSASL Attempt  // TLS, but no SASL login
	NoTLS  *Attempt // a SASL login without TLS; nil on the simulation (no TLS there)

	Rotation Rotation
}

// Visibility is what the partner, logged in with no ACL yet, may see.
type Visibility struct {
	Brokers []string // the brokers metadata lists to it
	Topics  int      // the topics metadata shows it
	All     int      // the topics the operator sees
	ReadErr error    // its read of Options.Topic
	ACLs    int      // the ACLs that name it (none, before `make acls`)
}

// Attempt is one misconfigured login: what franz-go's own Ping returns, and
// what brewkit.Ping, which diagnoses it, says.
type Attempt struct {
	Raw       error
	RawAfter  time.Duration
	Diagnosis error
}

// Rotation is what a new password for the partner changes.
type Rotation struct {
	Settled  time.Duration
	OldLogin error // a new login with the old password (brewkit.Ping's line)
	NewLogin error // a new login with the new one: nil
	// The client that logged in with the old password before the rotation:
	// a request on its connection to StaleNode (nil: served), how many
	// connections it opened for it, and its first connection to OtherNode.
	StaleNode, OtherNode int32
	Stale                error
	StaleDials           int
	Other                error
	// ReauthMs is connections.max.reauth.ms as the node describes it.
	ReauthMs string
}

// Run creates the users, lists them and tries the logins.
func Run(ctx context.Context, c secure.Cluster, o Options) (Result, error) {
	r := Result{SASL: c.SASL, Protocol: "SASL_SSL"}
	if c.Simulation() {
		r.Protocol = "SASL_PLAINTEXT"
	}
	acl, adm, err := brewkit.Connect(ctx, c.Admin)
	if err != nil {
		return r, err
	}
	defer adm.Close()
	if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.TopicNamed(o.Topic, 3)); err != nil {
		return r, err
	}

	// The operator creates both users: an upsert, so a second run sets them again.
	start := time.Now()
	if err := Upsert(ctx, adm, o.Iterations, o.Partner, o.Password, o.Analytics, o.AnalyticsPassword); err != nil {
		return r, err
	}
	partner, err := c.Password(o.Partner, o.Password)
	if err != nil {
		return r, err
	}
	analytics, err := c.Password(o.Analytics, o.AnalyticsPassword)
	if err != nil {
		return r, err
	}
	if err := everyNodeTakes(ctx, o.Settle, partner, analytics); err != nil {
		return r, err
	}
	r.Settled = time.Since(start)
	if r.Users, err = List(ctx, adm); err != nil {
		return r, err
	}

	if r.Partner, err = visibility(ctx, adm, partner, o.Topic); err != nil {
		return r, err
	}
	if r.Partner.ACLs, err = aclsOf(ctx, acl, secure.Principal(o.Partner)); err != nil {
		return r, err
	}

	// The bad logins have one seed, so that each line names one address.
	one := partner
	one.Brokers = partner.Brokers[:1]
	wrong := one
	wrong.Pass = o.Password + "-typo"
	r.Wrong = try(ctx, wrong)
	noSASL := one
	noSASL.SASL, noSASL.User, noSASL.Pass = "", "", ""
	r.NoSASL = try(ctx, noSASL)
	if !c.Simulation() {
		noTLS := one
		noTLS.TLS, noTLS.TLSConfig = false, nil
		a := try(ctx, noTLS)
		r.NoTLS = &a
	}

	if r.Rotation, err = rotate(ctx, c, adm, o, partner); err != nil {
		return r, err
	}
	return r, nil
}

// Upsert gives each user (user, password pairs) a SCRAM-SHA-512 password:
// AlterUserSCRAMs creates a user that is not there and replaces the password
// of one that is.
func Upsert(ctx context.Context, adm *kadm.Client, iterations int32, pairs ...string) error {
	var ups []kadm.UpsertSCRAM
	for i := 0; i+1 < len(pairs); i += 2 {
		ups = append(ups, kadm.UpsertSCRAM{User: pairs[i], Mechanism: kadm.ScramSha512, Iterations: iterations, Password: pairs[i+1]})
	}
	res, err := adm.AlterUserSCRAMs(ctx, nil, ups)
	if err != nil {
		return fmt.Errorf("AlterUserSCRAMs: %w", err)
	}
	for _, a := range res.Sorted() {
		if a.Err != nil {
			return fmt.Errorf("AlterUserSCRAMs %s: %w", a.User, a.Err)
		}
	}
	return nil
}

// List is every SCRAM credential of the cluster, by user and mechanism.
func List(ctx context.Context, adm *kadm.Client) ([]User, error) {
	described, err := adm.DescribeUserSCRAMs(ctx)
	if err != nil {
		return nil, fmt.Errorf("DescribeUserSCRAMs: %w", err)
	}
	var out []User
	for _, d := range described.Sorted() {
		if d.Err != nil {
			return nil, fmt.Errorf("DescribeUserSCRAMs %s: %w", d.User, d.Err)
		}
		for _, ci := range d.CredInfos {
			out = append(out, User{Name: d.User, Mechanism: ci.Mechanism.String(), Iterations: ci.Iterations})
		}
	}
	return out, nil
}

// Deleted is one user -delete removed, or found gone.
type Deleted struct {
	User    string
	Existed bool
}

// Delete removes the users' SCRAM-SHA-512 credentials; a user that has none
// is reported, not an error, so the reset can run twice.
func Delete(ctx context.Context, c secure.Cluster, users ...string) ([]Deleted, error) {
	_, adm, err := brewkit.Connect(ctx, c.Admin)
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	var del []kadm.DeleteSCRAM
	for _, u := range users {
		del = append(del, kadm.DeleteSCRAM{User: u, Mechanism: kadm.ScramSha512})
	}
	res, err := adm.AlterUserSCRAMs(ctx, del, nil)
	if err != nil {
		return nil, fmt.Errorf("AlterUserSCRAMs: %w", err)
	}
	var out []Deleted
	for _, u := range users {
		a, ok := res[u]
		switch {
		case !ok:
			return out, fmt.Errorf("AlterUserSCRAMs: no answer for %s", u)
		case errors.Is(a.Err, kerr.ResourceNotFound):
			out = append(out, Deleted{User: u})
		case a.Err != nil:
			return out, fmt.Errorf("AlterUserSCRAMs deleting %s: %w", u, a.Err)
		default:
			out = append(out, Deleted{User: u, Existed: true})
		}
	}
	return out, nil
}

// everyNodeTakes waits until each config's login works on every one of its
// brokers, each on a new connection: the controller commits a credential and
// the nodes apply it from the metadata log a moment apart.
func everyNodeTakes(ctx context.Context, limit time.Duration, cfgs ...brewkit.Config) error {
	var last error
	err := brewkit.WaitFor(ctx, limit, 50*time.Millisecond, func() bool {
		last = nil
		for _, cfg := range cfgs {
			for _, addr := range cfg.Brokers {
				one := cfg
				one.Brokers = []string{addr}
				if err := rawPing(ctx, one, 2*time.Second); err != nil {
					last = fmt.Errorf("%s logging in on %s: %w", cfg.User, addr, err)
					return false
				}
			}
		}
		return true
	})
	if err != nil && last != nil && ctx.Err() == nil {
		return fmt.Errorf("the new credentials did not reach every node within %s: %w", limit, last)
	}
	return err
}

// rawPing is franz-go's own Ping, on a client with nothing but the seeds,
// the SASL login and the TLS of cfg: what a program that does not diagnose
// its connection sees.
func rawPing(ctx context.Context, cfg brewkit.Config, limit time.Duration) error {
	cl, err := kgo.NewClient(cfg.Opts()...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	return cl.Ping(ctx)
}

// RawWait bounds the raw client's Ping in an Attempt.
const RawWait = 5 * time.Second

// try is one misconfigured login: franz-go's Ping, then brewkit.Ping.
func try(ctx context.Context, cfg brewkit.Config) Attempt {
	var a Attempt
	start := time.Now()
	a.Raw = rawPing(ctx, cfg, RawWait)
	a.RawAfter = time.Since(start)
	a.Diagnosis = login(ctx, cfg)
	return a
}

// login is a new client's brewkit.Ping: nil, or its one-line diagnosis.
func login(ctx context.Context, cfg brewkit.Config) error {
	cl, err := brewkit.NewClient(cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	return brewkit.Ping(ctx, cfg, cl)
}

// visibility is what the partner sees with no ACL: the brokers and topics
// metadata shows it, and its read of topic.
func visibility(ctx context.Context, adm *kadm.Client, cfg brewkit.Config, topic string) (Visibility, error) {
	var v Visibility
	all, err := adm.Metadata(ctx)
	if err != nil {
		return v, err
	}
	v.All = len(all.Topics)
	cl, padm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return v, fmt.Errorf("%s logging in: %w", cfg.User, err)
	}
	defer cl.Close()
	m, err := padm.Metadata(ctx)
	if err != nil {
		return v, fmt.Errorf("%s asking for metadata: %w", cfg.User, err)
	}
	for _, b := range m.Brokers {
		v.Brokers = append(v.Brokers, net.JoinHostPort(b.Host, fmt.Sprint(b.Port)))
	}
	slices.Sort(v.Brokers)
	v.Topics = len(m.Topics)

	v.ReadErr, err = read(ctx, cfg, topic)
	return v, err
}

// ReadWait bounds the partner's read of a topic it may not read.
const ReadWait = 10 * time.Second

// read consumes topic from its start until the first record or error; it
// returns the error Kafka gave (nil: the read worked).
func read(ctx context.Context, cfg brewkit.Config, topic string) (error, error) {
	cl, err := brewkit.NewClient(cfg, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.KeepRetryableFetchErrors())
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, ReadWait)
	defer cancel()
	var check brewkit.FetchCheck
	for {
		fs, err := check.Poll(ctx, cl, 1)
		if err != nil {
			return err, nil
		}
		if fs.NumRecords() > 0 || ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// connects counts a client's connections, per node, kgo's hook being called
// for each dial (a failed login included).
type connects struct {
	mu sync.Mutex
	n  map[int32]int
}

func (c *connects) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, _ error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[int32]int{}
	}
	c.n[meta.NodeID]++
}

func (c *connects) to(node int32) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[node]
}

// rotate gives the partner a new password and tries the old and the new on
// new connections, and a connection opened before.
func rotate(ctx context.Context, c secure.Cluster, adm *kadm.Client, o Options, old brewkit.Config) (Rotation, error) {
	var rot Rotation
	// The client that logs in before the rotation, on one node.
	var dials connects
	stale, err := brewkit.NewClient(old, kgo.WithHooks(&dials))
	if err != nil {
		return rot, err
	}
	defer stale.Close()
	if err := brewkit.Ping(ctx, old, stale); err != nil {
		return rot, err
	}
	m, err := kadm.NewClient(stale).BrokerMetadata(ctx)
	if err != nil {
		return rot, fmt.Errorf("%s asking for metadata: %w", old.User, err)
	}
	nodes := m.Brokers.NodeIDs()
	slices.Sort(nodes)
	if len(nodes) < 2 {
		return rot, fmt.Errorf("metadata lists %d brokers to %s: the rotation needs two", len(nodes), old.User)
	}
	rot.StaleNode, rot.OtherNode = nodes[0], nodes[1]
	if rot.ReauthMs, err = reauthMs(ctx, adm, rot.StaleNode); err != nil {
		return rot, err
	}
	if err := metadataOn(ctx, stale, rot.StaleNode); err != nil {
		return rot, fmt.Errorf("%s before the rotation, on node %d: %w", old.User, rot.StaleNode, err)
	}
	before := dials.to(rot.StaleNode)

	start := time.Now()
	if err := Upsert(ctx, adm, o.Iterations, o.Partner, o.Rotated); err != nil {
		return rot, err
	}
	rotated, err := c.Password(o.Partner, o.Rotated)
	if err != nil {
		return rot, err
	}
	if err := everyNodeTakes(ctx, o.Settle, rotated); err != nil {
		return rot, err
	}
	rot.Settled = time.Since(start)
	oldOne, rotatedOne := old, rotated
	oldOne.Brokers, rotatedOne.Brokers = old.Brokers[:1], rotated.Brokers[:1]
	rot.OldLogin = login(ctx, oldOne)
	rot.NewLogin = login(ctx, rotatedOne)

	rot.Stale = metadataOn(ctx, stale, rot.StaleNode)
	rot.StaleDials = dials.to(rot.StaleNode) - before
	rot.Other = metadataOn(ctx, stale, rot.OtherNode)
	if ctx.Err() != nil {
		return rot, ctx.Err()
	}
	return rot, nil
}

// metadataOn asks node for metadata through cl's connection to it (kgo
// opens one on first use and keeps it), without retries.
func metadataOn(ctx context.Context, cl *kgo.Client, node int32) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{}
	_, err := cl.Broker(int(node)).Request(ctx, req)
	return err
}

// reauthMs is node's connections.max.reauth.ms.
func reauthMs(ctx context.Context, adm *kadm.Client, node int32) (string, error) {
	rcs, err := adm.DescribeBrokerConfigs(ctx, node)
	if err != nil {
		return "", fmt.Errorf("describing the broker configs: %w", err)
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			return "", fmt.Errorf("describing the broker configs: %w", rc.Err)
		}
		for _, cfg := range rc.Configs {
			if cfg.Key == "connections.max.reauth.ms" {
				return cfg.MaybeValue(), nil
			}
		}
	}
	return "", fmt.Errorf("node %d does not describe connections.max.reauth.ms", node)
}

// aclsOf counts the ACLs whose principal is principal (User:NAME).
func aclsOf(ctx context.Context, cl *kgo.Client, principal string) (int, error) {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType = kmsg.ACLResourceTypeAny
	req.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	req.Principal = kmsg.StringPtr(principal)
	req.Operation = kmsg.ACLOperationAny
	req.PermissionType = kmsg.ACLPermissionTypeAny
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, fmt.Errorf("DescribeACLs %s: %w", principal, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return 0, fmt.Errorf("DescribeACLs %s: %w", principal, err)
	}
	n := 0
	for _, res := range resp.Resources {
		n += len(res.ACLs)
	}
	return n, nil
}

// Package quotas is `make quotas`: a producer byte-rate quota on a noisy
// client. Two SCRAM users, noisy and quiet, produce as fast as they can at
// the same time on the secured listeners, first with no quota, then with
// producer_byte_rate set on user=noisy (AlterClientQuotas, as the operator on
// the plaintext listeners); Run measures each one's throughput in both
// phases and the throttle time the brokers report to noisy's client.
//
// Kafka enforces a byte-rate quota on every broker separately and over a
// window (quota.window.num samples of quota.window.size.seconds, 11 x 1 s by
// default): a broker that sees a client above its rate does not refuse the
// request but answers with a throttle time and serves that connection
// nothing more until it has passed (KIP-219). The rates here are therefore
// per broker, and averages over a phase as long as that window.
package quotas

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
)

const (
	// ProducerByteRate is the quota key Run sets: bytes a second a client
	// may produce to each broker. Its siblings are consumer_byte_rate
	// (fetched bytes) and request_percentage (broker thread time).
	ProducerByteRate = "producer_byte_rate"
	// TopicPrefix starts the name of each run's topic, and is the prefix
	// the users' WRITE ACL names.
	TopicPrefix = "brew.secure.quotas."
	// Partitions of each run's topic: one per node, so noisy meets every
	// broker's quota at once.
	Partitions = 3
	// BatchBytes bounds a producer's batch, so a produce request (one
	// partition per broker) is at most that. A broker learns that a client
	// is past its quota from a request it has already taken, and the
	// requests it takes after each throttle land beyond the quota: in a
	// phase as short as the window they add up (at 512 KiB/s, 32 KiB
	// batches ran 7-9% over in 10.5 s on the stand, 16 KiB 4-5%; at the
	// 128 KiB/s of Defaults, 32 KiB ran 16% over). Smaller batches keep
	// closer to the quota, and make flat out slower.
	BatchBytes = 16 << 10
)

// Options say who produces, under which quota, for how long.
type Options struct {
	Noisy, Quiet string        // the SCRAM users; Noisy gets the quota
	Rate         int64         // producer_byte_rate for Noisy: bytes a second on each broker
	Free         time.Duration // both produce with no quota on Noisy
	Limited      time.Duration // both produce with the quota on Noisy
	RecordBytes  int           // the value of every record
	Progress     func(string)  // what Run is doing; nil: nothing
}

// Defaults are `make quotas`. A quota bounds the average over Kafka's
// window, not every second: a broker measures a client's rate over its last
// 11 samples of 1 s, and over no less than 10 s while it has fewer, so a
// client new to its quota writes about 10 s of it at once, then waits.
// Limited ends between 10 s, where the window starts to grow, and 11 s,
// where that first burst leaves it and the next one comes.
var Defaults = Options{
	Noisy: "noisy", Quiet: "quiet",
	// 128 KiB/s: far below what a producer does flat out on this 2-core
	// machine even while CI builds beside it (there, 512 KiB/s was about
	// all it could do, and the quota bound nothing).
	Rate: 128 << 10, Free: 4 * time.Second, Limited: 10500 * time.Millisecond,
	RecordBytes: 1024,
}

// Password is user's SCRAM password.
func Password(user string) string { return user + "-secret" }

// Flow is what one user's client produced in one phase.
type Flow struct {
	Elapsed time.Duration
	Records int64
	Bytes   map[int32]int64 // value bytes acknowledged, by the node that leads the partition
	// Throttled is, for each node, the time within the phase the broker
	// told this client to wait (throttle_time_ms of its responses, the
	// intervals merged), and Throttles how many responses said so.
	Throttled map[int32]time.Duration
	Throttles int
}

// PerBroker is the bytes a second each leader acknowledged, their mean.
func (f Flow) PerBroker() float64 {
	if len(f.Bytes) == 0 || f.Elapsed <= 0 {
		return 0
	}
	var sum int64
	for _, b := range f.Bytes {
		sum += b
	}
	return float64(sum) / float64(len(f.Bytes)) / f.Elapsed.Seconds()
}

// Node is the bytes a second node acknowledged.
func (f Flow) Node(node int32) float64 {
	if f.Elapsed <= 0 {
		return 0
	}
	return float64(f.Bytes[node]) / f.Elapsed.Seconds()
}

// ThrottledShare is the part of the phase the brokers held the client back,
// the mean over the nodes (0 to 1).
func (f Flow) ThrottledShare(nodes []int32) float64 {
	if len(nodes) == 0 || f.Elapsed <= 0 {
		return 0
	}
	var sum time.Duration
	for _, n := range nodes {
		sum += f.Throttled[n]
	}
	return sum.Seconds() / float64(len(nodes)) / f.Elapsed.Seconds()
}

// User is one user's two phases.
type User struct {
	Name          string
	Quota         int64 // its producer_byte_rate in the second phase; 0: none
	Without, With Flow
}

// Result is a run of Run.
type Result struct {
	Topic       string
	Leaders     []int32 // the nodes that lead the topic's partitions
	RecordBytes int
	Free        time.Duration
	Limited     time.Duration
	// Described is user=Noisy's quota as DescribeClientQuotas gives it
	// back, once every broker does.
	Described map[string]float64
	Noisy     User
	Quiet     User
}

// Run makes the users (SCRAM-SHA-512, WRITE on TopicPrefix*) and a fresh
// topic, sets the quota on Noisy and waits until every broker has it, has
// both users produce flat out on the secured listeners for o.Limited,
// removes the quota (again on every broker) and has them produce for
// o.Free. The topic is deleted at the end; the users stay (Delete removes
// them, and a quota a Ctrl-C left behind).
func Run(ctx context.Context, c secure.Cluster, o Options) (Result, error) {
	progress := o.Progress
	if progress == nil {
		progress = func(string) {}
	}
	cl, adm, err := brewkit.Connect(ctx, c.Admin)
	if err != nil {
		return Result{}, err
	}
	defer cl.Close()
	users := []string{o.Noisy, o.Quiet}
	if err := Ensure(ctx, adm, users...); err != nil {
		return Result{}, err
	}
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: TopicPrefix, Partitions: Partitions})
	if err != nil {
		return Result{}, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover expires in an hour, and reset-lecture deletes it
	r := Result{Topic: topic, RecordBytes: o.RecordBytes, Free: o.Free, Limited: o.Limited}
	leaderOf, err := leaders(ctx, adm, topic)
	if err != nil {
		return Result{}, err
	}
	for _, n := range leaderOf {
		if !slices.Contains(r.Leaders, n) {
			r.Leaders = append(r.Leaders, n)
		}
	}
	slices.Sort(r.Leaders)

	var ps []*producer
	for _, u := range users {
		cfg, err := c.Password(u, Password(u))
		if err != nil {
			return Result{}, err
		}
		p, err := newProducer(ctx, cfg, u, topic, o.RecordBytes, leaderOf)
		if err != nil {
			return Result{}, err
		}
		defer p.cl.Close()
		ps = append(ps, p)
	}
	// The quota first: a broker meters a client's bytes (once any quota
	// exists in the cluster) whether or not the client has a quota, and a
	// quota set right after a flood starts by paying back the flood still
	// in its window. Measured first, the quota phase shows the quota alone.
	if err := SetQuota(ctx, adm, o.Noisy, o.Rate); err != nil {
		return Result{}, err
	}
	if err := WaitEveryBroker(ctx, cl, o.Noisy, float64(o.Rate)); err != nil {
		return Result{}, err
	}
	if r.Described, err = Describe(ctx, adm, o.Noisy); err != nil {
		return Result{}, err
	}
	progress(fmt.Sprintf("%s=%d on user=%s; both produce flat out for %s", ProducerByteRate, o.Rate, o.Noisy, o.Limited))
	with, err := together(ctx, ps, o.Limited)
	if err != nil {
		return Result{}, err
	}
	if err := RemoveQuota(ctx, adm, o.Noisy); err != nil {
		return Result{}, err
	}
	if err := WaitEveryBroker(ctx, cl, o.Noisy, 0); err != nil {
		return Result{}, err
	}
	progress(fmt.Sprintf("the quota removed; both produce flat out for %s", o.Free))
	without, err := together(ctx, ps, o.Free)
	if err != nil {
		return Result{}, err
	}
	r.Noisy = User{Name: o.Noisy, Quota: o.Rate, Without: without[0], With: with[0]}
	r.Quiet = User{Name: o.Quiet, Without: without[1], With: with[1]}
	return r, nil
}

// leaders maps each partition of topic to its leader.
func leaders(ctx context.Context, adm *kadm.Client, topic string) (map[int32]int32, error) {
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return nil, err
	}
	d, ok := td[topic]
	if !ok || d.Err != nil {
		return nil, fmt.Errorf("describing %s: %v", topic, d.Err)
	}
	m := map[int32]int32{}
	for _, p := range d.Partitions {
		if p.Err != nil || p.Leader < 0 {
			return nil, fmt.Errorf("%s partition %d has no leader (%v)", topic, p.Partition, p.Err)
		}
		m[p.Partition] = p.Leader
	}
	return m, nil
}

// together runs every producer for d at once.
func together(ctx context.Context, ps []*producer, d time.Duration) ([]Flow, error) {
	flows := make([]Flow, len(ps))
	errs := make([]error, len(ps))
	var wg sync.WaitGroup
	start := time.Now()
	for i, p := range ps {
		wg.Go(func() { flows[i], errs[i] = p.run(ctx, start, d) })
	}
	wg.Wait()
	return flows, errors.Join(errs...)
}

// entity is user=name.
func entity(user string) kadm.ClientQuotaEntity {
	return kadm.ClientQuotaEntity{{Type: "user", Name: &user}}
}

// SetQuota sets producer_byte_rate on user=user: a client that logs in as
// user, on any listener and with any client id, may produce rate bytes a
// second to each broker.
func SetQuota(ctx context.Context, adm *kadm.Client, user string, rate int64) error {
	return alterQuota(ctx, adm, user, kadm.AlterClientQuotaOp{Key: ProducerByteRate, Value: float64(rate)})
}

// RemoveQuota removes producer_byte_rate from user=user (none there is fine).
func RemoveQuota(ctx context.Context, adm *kadm.Client, user string) error {
	return alterQuota(ctx, adm, user, kadm.AlterClientQuotaOp{Key: ProducerByteRate, Remove: true})
}

func alterQuota(ctx context.Context, adm *kadm.Client, user string, op kadm.AlterClientQuotaOp) error {
	what := fmt.Sprintf("setting %s=%.0f on user=%s", op.Key, op.Value, user)
	if op.Remove {
		what = fmt.Sprintf("removing %s from user=%s", op.Key, user)
	}
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: entity(user), Ops: []kadm.AlterClientQuotaOp{op}}})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	for _, a := range res {
		if a.Err != nil {
			return fmt.Errorf("%s: %w", what, a.Err)
		}
	}
	return nil
}

// Describe is user=user's quotas (strict: the user entity alone, not
// user and client id), by key.
func Describe(ctx context.Context, adm *kadm.Client, user string) (map[string]float64, error) {
	qs, err := adm.DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchName: &user}})
	if err != nil {
		return nil, fmt.Errorf("describing the quotas of user=%s: %w", user, err)
	}
	m := map[string]float64{}
	for _, q := range qs {
		for _, v := range q.Values {
			m[v.Key] = v.Value
		}
	}
	return m, nil
}

// WaitEveryBroker waits until every broker describes user=user's
// producer_byte_rate as rate (0: none). A quota reaches the brokers through
// the metadata log, each on its own; a broker answers DescribeClientQuotas
// from what it has applied.
func WaitEveryBroker(ctx context.Context, cl *kgo.Client, user string, rate float64) error {
	var seen string
	err := brewkit.WaitFor(ctx, 10*time.Second, 50*time.Millisecond, func() bool {
		brokers, err := kadm.NewClient(cl).ListBrokers(ctx)
		if err != nil {
			seen = err.Error()
			return false
		}
		for _, b := range brokers {
			got, err := describeOn(ctx, cl, b.NodeID, user)
			if err != nil {
				seen = fmt.Sprintf("node %d: %v", b.NodeID, err)
				return false
			}
			if got != rate {
				seen = fmt.Sprintf("node %d: %s=%.0f", b.NodeID, ProducerByteRate, got)
				return false
			}
		}
		return true
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("waiting for every broker to have %s=%.0f on user=%s: %w (last: %s)", ProducerByteRate, rate, user, err, seen)
	}
	return err
}

func describeOn(ctx context.Context, cl *kgo.Client, node int32, user string) (float64, error) {
	req := kmsg.NewPtrDescribeClientQuotasRequest()
	req.Strict = true
	c := kmsg.NewDescribeClientQuotasRequestComponent()
	c.EntityType, c.Match = "user", &user
	req.Components = append(req.Components, c)
	resp, err := req.RequestWith(ctx, cl.Broker(int(node)))
	if err != nil {
		return 0, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return 0, err
	}
	for _, e := range resp.Entries {
		for _, v := range e.Values {
			if v.Key == ProducerByteRate {
				return v.Value, nil
			}
		}
	}
	return 0, nil
}

// acl is what Ensure grants and Delete takes back: WRITE (which implies
// DESCRIBE, and since Kafka 3.0 the idempotent producer's IDEMPOTENT_WRITE)
// on every topic named TopicPrefix*.
func acl(users ...string) *kadm.ACLBuilder {
	var principals []string
	for _, u := range users {
		principals = append(principals, "User:"+u)
	}
	return kadm.NewACLs().Allow(principals...).AllowHosts().
		Topics(TopicPrefix).ResourcePatternType(kadm.ACLPatternPrefixed).
		Operations(kadm.OpWrite)
}

// Ensure gives each user its SCRAM-SHA-512 password (an upsert: created, or
// set again) and the WRITE ACL on TopicPrefix*. Creating an ACL that exists
// changes nothing.
func Ensure(ctx context.Context, adm *kadm.Client, users ...string) error {
	var up []kadm.UpsertSCRAM
	for _, u := range users {
		up = append(up, kadm.UpsertSCRAM{User: u, Mechanism: kadm.ScramSha512, Iterations: 4096, Password: Password(u)})
	}
	res, err := adm.AlterUserSCRAMs(ctx, nil, up)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		return fmt.Errorf("setting the SCRAM passwords of %v: %w", users, err)
	}
	created, err := adm.CreateACLs(ctx, acl(users...))
	if err == nil {
		for _, c := range created {
			if c.Err != nil {
				err = c.Err
				break
			}
		}
	}
	if err != nil {
		return fmt.Errorf("granting %v WRITE on %s*: %w", users, TopicPrefix, err)
	}
	return nil
}

// Deleted is what Delete removed.
type Deleted struct {
	Quotas []string // users whose producer_byte_rate it removed
	ACLs   int
	Users  []string // users whose SCRAM password it deleted
}

// Delete takes back what Run gave: the quota on each user, the WRITE ACL,
// the SCRAM passwords. What is not there is skipped.
func Delete(ctx context.Context, adm *kadm.Client, users ...string) (Deleted, error) {
	var d Deleted
	for _, u := range users {
		q, err := Describe(ctx, adm, u)
		if err != nil {
			return d, err
		}
		if _, ok := q[ProducerByteRate]; !ok {
			continue
		}
		if err := RemoveQuota(ctx, adm, u); err != nil {
			return d, err
		}
		d.Quotas = append(d.Quotas, u)
	}
	res, err := adm.DeleteACLs(ctx, acl(users...))
	if err != nil {
		return d, fmt.Errorf("deleting the ACLs of %v: %w", users, err)
	}
	for _, r := range res {
		if r.Err != nil {
			return d, fmt.Errorf("deleting the ACLs of %v: %w", users, r.Err)
		}
		d.ACLs += len(r.Deleted)
	}
	described, err := adm.DescribeUserSCRAMs(ctx, users...)
	if err != nil {
		return d, fmt.Errorf("describing the SCRAM users %v: %w", users, err)
	}
	var del []kadm.DeleteSCRAM
	for _, u := range users {
		if du, ok := described[u]; ok && du.Err == nil {
			for _, ci := range du.CredInfos {
				del = append(del, kadm.DeleteSCRAM{User: u, Mechanism: ci.Mechanism})
			}
			d.Users = append(d.Users, u)
		}
	}
	if len(del) > 0 {
		altered, err := adm.AlterUserSCRAMs(ctx, del, nil)
		if err == nil {
			err = altered.Error()
		}
		if err != nil {
			return d, fmt.Errorf("deleting the SCRAM passwords of %v: %w", d.Users, err)
		}
	}
	return d, nil
}

// producer is one user's client: no compression (the bytes it counts are
// the bytes on the wire the quota meters), BatchBytes batches, records
// spread over the partitions in turn.
type producer struct {
	user     string
	cl       *kgo.Client
	topic    string
	value    []byte
	leaderOf map[int32]int32
	hook     *throttleHook
}

// newProducer is user's producer, logged in with cfg.
func newProducer(ctx context.Context, cfg brewkit.Config, user, topic string, size int, leaderOf map[int32]int32) (*producer, error) {
	p := &producer{user: user, topic: topic, value: make([]byte, size), leaderOf: leaderOf, hook: &throttleHook{}}
	for i := range p.value {
		p.value[i] = 'a' + byte(i%26)
	}
	opts := []kgo.Opt{
		kgo.ClientID("brew-quotas-" + user),
		kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerBatchMaxBytes(BatchBytes),
		kgo.MaxBufferedRecords(2048),
		kgo.WithHooks(p.hook),
	}
	// A password just set, an ACL just created: each broker applies them
	// from the metadata log a moment later. Log in and ask for the topic
	// until the broker lets the user see it (WRITE implies DESCRIBE). No
	// record yet: a byte produced now would start the quota's window before
	// the phase.
	var last error
	werr := brewkit.WaitFor(ctx, 15*time.Second, 200*time.Millisecond, func() bool {
		if p.cl != nil {
			p.cl.Close()
		}
		if p.cl, last = brewkit.NewClient(cfg, opts...); last != nil {
			return false
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if last = brewkit.Ping(pctx, cfg, p.cl); last != nil {
			return false
		}
		var md kadm.Metadata
		if md, last = kadm.NewClient(p.cl).Metadata(pctx, topic); last != nil {
			return false
		}
		last = md.Topics[topic].Err
		return last == nil
	})
	if werr != nil {
		if p.cl != nil {
			p.cl.Close()
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s producing to %s on %s: %w", user, topic, cfg.Bootstrap(), last)
	}
	return p, nil
}

// run produces as fast as the client takes records from start for d, and
// counts what the brokers acknowledged within it.
func (p *producer) run(ctx context.Context, start time.Time, d time.Duration) (Flow, error) {
	end := start.Add(d)
	p.hook.reset(start, end)
	pctx, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	f := Flow{Bytes: map[int32]int64{}}
	for _, n := range p.leaderOf {
		f.Bytes[n] = 0
	}
	var mu sync.Mutex
	var failed error
	for pctx.Err() == nil {
		p.cl.Produce(pctx, &kgo.Record{Value: p.value}, func(r *kgo.Record, err error) {
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && now.Before(end):
				f.Records++
				f.Bytes[p.leaderOf[r.Partition]] += int64(len(r.Value))
			case err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && failed == nil:
				failed = fmt.Errorf("%s producing to %s: %w", p.user, p.topic, err)
			}
		})
	}
	// What is still buffered or in flight is no part of the phase: wait
	// for it, so the next phase starts with an empty client.
	fctx, fcancel := context.WithTimeout(ctx, 15*time.Second) // Ctrl-C: no wait
	defer fcancel()
	if err := p.cl.Flush(fctx); err != nil && ctx.Err() == nil {
		return Flow{}, fmt.Errorf("%s: waiting for the phase's last records: %w", p.user, err)
	}
	if ctx.Err() != nil {
		return Flow{}, ctx.Err()
	}
	mu.Lock()
	defer mu.Unlock()
	f.Elapsed = d
	f.Throttled, f.Throttles = p.hook.result()
	return f, failed
}

// throttleHook is kgo's HookBrokerThrottle: for each broker, how long
// within the phase its throttle times held the client back, overlapping
// ones counted once.
type throttleHook struct {
	mu       sync.Mutex
	from, to time.Time
	until    map[int32]time.Time
	held     map[int32]time.Duration
	n        int
}

var _ kgo.HookBrokerThrottle = (*throttleHook)(nil)

func (h *throttleHook) reset(from, to time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.from, h.to = from, to
	h.until, h.held, h.n = map[int32]time.Time{}, map[int32]time.Duration{}, 0
}

// OnBrokerThrottle is called with each response that carries a throttle
// time. Kafka 2.0+ answers at once and expects the client to wait
// (throttledAfterResponse): kgo sends that broker nothing until then.
func (h *throttleHook) OnBrokerThrottle(meta kgo.BrokerMetadata, d time.Duration, _ bool) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.until == nil || now.Before(h.from) || !now.Before(h.to) {
		return
	}
	h.n++
	id := meta.NodeID
	from, to := now, now.Add(d)
	if u := h.until[id]; u.After(from) {
		from = u
	}
	if to.After(h.until[id]) {
		h.until[id] = to
	}
	if to.After(h.to) {
		to = h.to
	}
	if to.After(from) {
		h.held[id] += to.Sub(from)
	}
}

func (h *throttleHook) result() (map[int32]time.Duration, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	held := map[int32]time.Duration{}
	for id, d := range h.held {
		held[id] = d
	}
	return held, h.n
}

// KiB is bytes a second in KiB/s, as the table prints it.
func KiB(bytesPerSecond float64) string { return strconv.FormatFloat(bytesPerSecond/1024, 'f', 0, 64) }

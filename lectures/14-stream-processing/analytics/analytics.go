// Package analytics is Brew's analytics service as a stream processor:
// revenue per shop per minute, counted from the orders by event time as
// they arrive. Each instance consumes its share of the orders' partitions
// in one consumer group; for each batch it judges every order against its
// partition's stream time (window.Judge), adds the accepted ones to their
// windows, and writes what changed to the changelog (the state's truth)
// and to the output topic (the live revenue), then commits. With
// exactly-once on, the batch's changelog and output records and its input
// offsets are one transaction; without, the records are written and the
// offsets committed after, and a crash between the two counts a batch
// twice.
//
// The windows live in a local store (package store) that a batch reaches
// only once Kafka has taken it. When an instance gets a partition, it
// first brings the partition's state up to date from the changelog, from
// where its local store left off (all of it, when the store is gone).
package analytics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/store"
	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
	"github.com/brew-course/kafka/lectures/14-stream-processing/window"
)

// Stage is a point in a batch where a crash drill kills the service.
type Stage string

const (
	Counting  Stage = "counting"  // halfway through the batch's orders, nothing written
	Written   Stage = "written"   // changelog and output written, offsets not committed
	Committed Stage = "committed" // committed, the local store not yet written
)

// Stages are the drill's crash points, in a batch's order.
var Stages = []Stage{Counting, Written, Committed}

// ParseStage reads a stage's name.
func ParseStage(s string) (Stage, error) {
	if slices.Contains(Stages, Stage(s)) {
		return Stage(s), nil
	}
	return "", fmt.Errorf("no stage %q (one of %v)", s, Stages)
}

// Config is one instance of the service.
type Config struct {
	In        string // the orders
	Changelog string // the windows' changelog: as many partitions as In, compacted
	Out       string // the live revenue: as many partitions as In
	Group     string // the application's consumer group (Kafka Streams' application.id)
	ID        string // the instance: its transactional id is Group + "." + ID
	Dir       string // its local store
	EOS       bool   // exactly once: each batch one transaction
	Window    window.Tumbling
	Batch     int           // orders per batch, at most
	Idle      time.Duration // stop once no order came for this long (0: run until ctx ends)
	Warm      bool          // restore every changelog partition before joining the group (a standby)

	CrashAfter int   // with CrashAt: kill the process in the batch that reaches this many orders
	CrashAt    Stage // where in that batch
}

// Defaults are the service's as the lecture runs it.
var Defaults = Config{
	In: "brew.stream.orders", Changelog: "brew.stream.analytics-revenue-changelog", Out: "brew.stream.revenue",
	Group: "brew.stream.analytics", ID: "a", Dir: ".state/a",
	EOS: true, Window: window.Brew, Batch: 100, Idle: 3 * time.Second,
}

// Stats is what one run of an instance did.
type Stats struct {
	ID         string           `json:"id"`
	Orders     int              `json:"orders"` // counted in committed batches
	Batches    int              `json:"batches"`
	Aborted    int              `json:"aborted"` // batches aborted and read again (a rebalance)
	Counts     window.Counts    `json:"counts"`
	Partitions []int32          `json:"partitions"` // every partition it counted
	Restores   []store.Restored `json:"restores"`
}

// Restored is the changelog records its restores read, and how long they took.
func (s Stats) Restored() (records int, took time.Duration) {
	for _, r := range s.Restores {
		records += r.Records
		took += r.Took
	}
	return records, took
}

// Run runs one instance until ctx ends or Idle passes without orders.
func Run(ctx context.Context, cfg brewkit.Config, c Config, say func(string)) (Stats, error) {
	a := &app{c: c, cfg: cfg, say: say, st: Stats{ID: c.ID}, parts: map[int32]store.Partition{}, ready: map[int32]bool{}}
	var err error
	if a.db, err = store.Open(c.Dir); err != nil {
		return a.st, err
	}
	defer a.db.Close()
	if err := a.connect(ctx); err != nil {
		return a.st, err
	}
	defer a.close()
	err = a.serve(ctx)
	slices.Sort(a.st.Partitions)
	return a.st, err
}

// app is one running instance.
type app struct {
	c   Config
	cfg brewkit.Config
	say func(string)
	st  Stats
	db  *store.Store
	adm *kadm.Client

	mu    sync.Mutex
	ready map[int32]bool            // partitions owned and restored
	parts map[int32]store.Partition // their stream time and counts

	// the batch's steps, with or without a transaction
	cl    *kgo.Client
	begin func() error
	end   func(ctx context.Context, ok bool) (bool, error)
	close func()

	handled int
	fetched atomic.Int64 // when a broker last answered a fetch (Unix nanoseconds)
}

// fetchHook notes each fetch a broker answered: the service is idle only
// when brokers answer "nothing new", not when they answer nothing.
type fetchHook struct{ a *app }

func (h fetchHook) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == 1 && err == nil { // Fetch
		h.a.fetched.Store(time.Now().UnixNano())
	}
}

func (a *app) consumerOpts() []kgo.Opt {
	forget := func(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, p := range lost[a.c.In] {
			delete(a.ready, p)
		}
	}
	return []kgo.Opt{
		kgo.ConsumerGroup(a.c.Group),
		kgo.ConsumeTopics(a.c.In),
		kgo.InstanceID(a.c.Group + "." + a.c.ID), // static: a restarted instance takes its partitions back at once
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.SessionTimeout(6 * time.Second),
		kgo.HeartbeatInterval(time.Second),
		kgo.FetchMaxWait(time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), // partition p's changes go to partition p
		kgo.OnPartitionsRevoked(forget),
		kgo.OnPartitionsLost(forget),
		kgo.WithHooks(fetchHook{a}),
		kgo.KeepRetryableFetchErrors(),
	}
}

// connect makes the client, with a transactional id or without.
func (a *app) connect(ctx context.Context) error {
	if a.c.EOS {
		gts, err := kgo.NewGroupTransactSession(brewkit.ClientOpts(a.cfg, append(a.consumerOpts(),
			brewkit.TransactionalID(a.c.Group+"."+a.c.ID),
			kgo.TransactionTimeout(20*time.Second),
		)...)...)
		if err != nil {
			return fmt.Errorf("kafka client for %s: %w", a.cfg.Bootstrap(), err)
		}
		a.cl, a.close = gts.Client(), gts.Close
		if err := brewkit.Ping(ctx, a.cfg, a.cl); err != nil {
			gts.Close()
			return err
		}
		// Fence an earlier process of this instance and abort its open
		// transaction before reading: its pending offsets would hold
		// this consumer's offset fetch.
		if _, _, err := a.cl.ProducerID(ctx); err != nil {
			gts.Close()
			return fmt.Errorf("initializing transactional id %s.%s: %w", a.c.Group, a.c.ID, err)
		}
		a.begin = gts.Begin
		a.end = func(ctx context.Context, ok bool) (bool, error) { return gts.End(ctx, kgo.TransactionEndTry(ok)) }
	} else {
		cl, _, err := brewkit.Connect(ctx, a.cfg, append(a.consumerOpts(), kgo.DisableAutoCommit())...)
		if err != nil {
			return err
		}
		a.cl, a.close = cl, cl.Close
		a.begin = func() error { return nil }
		a.end = func(ctx context.Context, ok bool) (bool, error) {
			if !ok {
				cl.SetOffsets(cl.CommittedOffsets())
				return false, nil
			}
			if err := cl.CommitUncommittedOffsets(ctx); err != nil {
				return false, fmt.Errorf("committing offsets: %w", err)
			}
			return true, nil
		}
	}
	a.adm = kadm.NewClient(a.cl)
	if a.c.Warm {
		return a.warm(ctx)
	}
	return nil
}

// warm restores every partition of the changelog before the instance joins
// the group, as a standby that has followed the changelog would be: once
// it gets partitions, it reads only what changed since.
func (a *app) warm(ctx context.Context) error {
	td, err := a.adm.ListTopics(ctx, a.c.Changelog)
	if err == nil {
		err = td.Error()
	}
	if err != nil {
		return fmt.Errorf("the partitions of %s: %w", a.c.Changelog, err)
	}
	r, err := a.db.Restore(ctx, a.cfg, a.adm, a.c.Changelog, td[a.c.Changelog].Partitions.Numbers())
	if err != nil {
		return err
	}
	a.say(fmt.Sprintf("analytics %s: standby: read %d changelog records of partitions %v in %s before joining", a.c.ID, r.Records, r.Partitions, r.Took.Round(time.Millisecond)))
	return nil
}

// serve counts batches until ctx ends or Idle passes without orders.
func (a *app) serve(ctx context.Context) error {
	var check brewkit.FetchCheck
	idleSince := time.Now()
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs, err := check.Poll(pctx, a.cl, a.c.Batch)
		cancel()
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			return err
		}
		recs := fs.Records()
		if len(recs) == 0 {
			answered := time.Unix(0, a.fetched.Load())
			if a.c.Idle > 0 && time.Since(idleSince) >= a.c.Idle && answered.After(idleSince) {
				return nil
			}
			if a.c.Idle > 0 && time.Since(idleSince) >= a.c.Idle+2*a.cfg.Bound() {
				return fmt.Errorf("reading %s: no broker answered a fetch for %s", a.c.In, time.Since(idleSince).Round(time.Second))
			}
			continue
		}
		idleSince = time.Now()
		if err := a.batch(ctx, recs); err != nil {
			return err
		}
	}
	return nil
}

// restore brings the batch's partitions that the instance has just got up
// to date from the changelog.
func (a *app) restore(ctx context.Context, recs []*kgo.Record) error {
	a.mu.Lock()
	var todo []int32
	for _, r := range recs {
		if !a.ready[r.Partition] && !slices.Contains(todo, r.Partition) {
			todo = append(todo, r.Partition)
		}
	}
	a.mu.Unlock()
	if len(todo) == 0 {
		return nil
	}
	slices.Sort(todo)
	res, err := a.db.Restore(ctx, a.cfg, a.adm, a.c.Changelog, todo)
	if err != nil {
		return err
	}
	a.st.Restores = append(a.st.Restores, res)
	a.say(fmt.Sprintf("analytics %s: partitions %v: restored %d changelog records in %s", a.c.ID, todo, res.Records, res.Took.Round(time.Millisecond)))
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range todo {
		m, _, err := a.db.Meta(p)
		if err != nil {
			return err
		}
		a.parts[p], a.ready[p] = m, true
		if !slices.Contains(a.st.Partitions, p) {
			a.st.Partitions = append(a.st.Partitions, p)
		}
	}
	return nil
}

// batch counts one batch of orders and makes it final.
func (a *app) batch(ctx context.Context, recs []*kgo.Record) error {
	if err := a.restore(ctx, recs); err != nil {
		return err
	}
	armed := a.c.CrashAt != "" && a.handled+len(recs) >= a.c.CrashAfter
	if err := a.begin(); err != nil {
		return fmt.Errorf("beginning a transaction: %w", err)
	}
	changes := map[int32]*store.Changes{}
	var counts window.Counts
	for i, r := range recs {
		if armed && a.c.CrashAt == Counting && i == len(recs)/2 {
			brewkit.Crash()
		}
		o, err := till.Decode(r)
		if err != nil {
			return err
		}
		c := changes[r.Partition]
		if c == nil {
			a.mu.Lock()
			c = &store.Changes{Windows: map[window.Key]window.Revenue{}, Meta: a.parts[r.Partition]}
			a.mu.Unlock()
			changes[r.Partition] = c
		}
		v, stream := a.c.Window.Judge(c.Meta.Stream, o.At)
		c.Meta.Stream = stream
		c.Meta.Counts.Count(v)
		counts.Count(v)
		if v == window.TooLate {
			continue
		}
		k := window.Key{Shop: o.ShopID, Start: a.c.Window.Start(o.At)}
		rev, ok := c.Windows[k]
		if !ok {
			if rev, err = a.db.Window(r.Partition, k); err != nil {
				return err
			}
		}
		c.Windows[k] = rev.Add(o.Cents)
	}

	applied, writeErr, err := a.write(ctx, changes)
	if err != nil {
		return err
	}
	if armed && a.c.CrashAt == Written {
		brewkit.Crash()
	}
	committed, err := a.end(ctx, writeErr == nil)
	if err != nil {
		return fmt.Errorf("ending the batch: %w", err)
	}
	if writeErr != nil && !kerr.IsRetriable(writeErr) {
		return fmt.Errorf("writing the changelog and the revenue: %w", writeErr)
	}
	if !committed {
		a.st.Aborted++
		return nil
	}
	if armed && a.c.CrashAt == Committed {
		brewkit.Crash()
	}
	if err := a.db.Apply(changes, applied); err != nil {
		return err
	}
	a.mu.Lock()
	for p, c := range changes {
		a.parts[p] = c.Meta
	}
	a.mu.Unlock()
	a.handled += len(recs)
	a.st.Orders += len(recs)
	a.st.Batches++
	a.st.Counts.Records += counts.Records
	a.st.Counts.OutOfOrder += counts.OutOfOrder
	a.st.Counts.TooLate += counts.TooLate
	return nil
}

// Update is a window's revenue as the output topic carries it.
type Update struct {
	Shop   string    `json:"shop"`
	Start  time.Time `json:"window_start"`
	End    time.Time `json:"window_end"`
	Orders int       `json:"orders"`
	Cents  int64     `json:"cents"`
}

// write produces the batch's changelog and output records and waits for
// them. applied is, per partition, the changelog offset after the batch's
// last record; writeErr what the brokers refused.
func (a *app) write(ctx context.Context, changes map[int32]*store.Changes) (applied map[int32]int64, writeErr, err error) {
	applied = map[int32]int64{}
	var mu sync.Mutex
	promise := func(r *kgo.Record, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			writeErr = cmp(writeErr, err)
			return
		}
		if r.Topic == a.c.Changelog && r.Offset+1 > applied[r.Partition] {
			applied[r.Partition] = r.Offset + 1
		}
	}
	for _, p := range slices.Sorted(maps.Keys(changes)) {
		c := changes[p]
		for _, r := range store.Records(a.c.Changelog, p, c) {
			a.cl.Produce(ctx, r, promise)
		}
		for _, k := range store.SortedKeys(c.Windows) {
			rev := c.Windows[k]
			v, _ := json.Marshal(Update{k.Shop, k.Start, k.Start.Add(a.c.Window.Size), rev.Orders, rev.Cents})
			a.cl.Produce(ctx, &kgo.Record{Topic: a.c.Out, Partition: p, Key: []byte(k.String()), Value: v}, promise)
		}
	}
	fctx, cancel := context.WithTimeout(ctx, a.cfg.Bound())
	defer cancel()
	if err := a.cl.Flush(fctx); err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, fmt.Errorf("writing to %s and %s: no acknowledgement within %s", a.c.Changelog, a.c.Out, a.cfg.Bound())
	}
	mu.Lock()
	defer mu.Unlock()
	return applied, writeErr, nil
}

func cmp(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

// Topics creates the service's changelog and output topics for input in,
// as many partitions as it has, unless they exist.
func Topics(ctx context.Context, adm *kadm.Client, c Config) error {
	td, err := adm.ListTopics(ctx, c.In)
	if err == nil {
		err = td.Error()
	}
	if err != nil {
		return fmt.Errorf("the orders' topic %s: %w", c.In, err)
	}
	n := int32(len(td[c.In].Partitions))
	for _, t := range []struct {
		name    string
		configs map[string]string
	}{{c.Changelog, store.ChangelogConfigs}, {c.Out, nil}} {
		configs := map[string]*string{}
		for k, v := range t.configs {
			configs[k] = &v
		}
		resp, err := adm.CreateTopic(ctx, n, -1, configs, t.name)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("creating %s: %w", t.name, err)
		}
	}
	return brewkit.WaitTopics(ctx, adm, c.Changelog, c.Out)
}

// DeleteGroup removes the instances ids of group c.Group and deletes the
// group, for a demo's cleanup. Static members do not leave a group when
// they stop (that is the point of them), so the group stays non-empty until
// their sessions time out unless they are removed by their instance ids.
func DeleteGroup(ctx context.Context, adm *kadm.Client, c Config, ids ...string) error {
	instances := make([]string, len(ids))
	for i, id := range ids {
		instances[i] = c.Group + "." + id
	}
	if len(instances) > 0 {
		adm.LeaveGroup(ctx, kadm.LeaveGroup(c.Group).InstanceIDs(instances...).Reason("the demo ended")) //nolint:errcheck // the delete says what failed
	}
	_, err := adm.DeleteGroup(ctx, c.Group)
	return err
}

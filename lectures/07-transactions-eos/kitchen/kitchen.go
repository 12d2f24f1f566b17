// Package kitchen is Brew's kitchen-service: it reads OrderPlaced events in a
// consumer group and writes KitchenStarted and OrderReady for each order.
//
// With exactly-once (the default) each polled batch is one transaction: the
// kitchen events and the consumed offsets commit together or not at all
// (kgo.GroupTransactSession). Without it, the service produces the events and
// then commits the offsets, and a crash between the two repeats the batch.
//
// To prove it, the service can kill itself with SIGKILL at a chosen stage of
// the batch in which it reaches a given number of orders.
package kitchen

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/txns"
)

// Stage is a point in a batch's life where the service can crash.
type Stage string

// The stages, in the order a batch passes them.
const (
	// Poll: the batch is polled, nothing is written.
	Poll Stage = "poll"
	// Produce: the first order's kitchen events are written, the rest not.
	Produce Stage = "produce"
	// Flushed: every kitchen event of the batch is acknowledged, the
	// offsets are not committed.
	Flushed Stage = "flushed"
	// Offsets: the offset commit is on the wire (TxnOffsetCommit with
	// exactly-once, OffsetCommit without).
	Offsets Stage = "offsets"
	// Commit: with exactly-once, EndTxn (commit) is on the wire: the broker
	// may commit the transaction, but the service never hears. Without it,
	// the offset commit has returned.
	Commit Stage = "commit"
)

// Stages lists them in order.
var Stages = []Stage{Poll, Produce, Flushed, Offsets, Commit}

// ParseStage accepts the names above.
func ParseStage(s string) (Stage, error) {
	if st := Stage(s); slices.Contains(Stages, st) {
		return st, nil
	}
	return "", fmt.Errorf("unknown stage %q: use poll, produce, flushed, offsets or commit", s)
}

// Config is one run of the service.
type Config struct {
	In, Out string // orders in, kitchen events out
	Group   string
	// ID is the transactional id with exactly-once, and the group instance
	// id either way: a restarted service takes its place at once.
	ID         string
	NoEOS      bool          // produce, then commit offsets: at-least-once
	Batch      int           // orders per transaction (one poll)
	CrashAfter int           // crash in the batch that reaches this many orders (0: never)
	CrashAt    Stage         // where in that batch
	Idle       time.Duration // return after this long without orders (0: run until ctx ends)
}

// Defaults: Brew's topics and group, 10 orders per transaction.
var Defaults = Config{
	In: brewkit.Orders.Name, Out: brewkit.Kitchen.Name, Group: "brew.kitchen-service", ID: "kitchen-1",
	Batch: 10, CrashAt: Flushed,
}

// Stats is what one run did.
type Stats struct {
	Orders     int   `json:"orders"`  // orders in committed batches
	Events     int   `json:"events"`  // kitchen events in committed batches
	Batches    int   `json:"batches"` // committed
	Aborted    int   `json:"aborted"` // batches aborted (a rebalance, a failed write) and read again
	Producer   int64 `json:"producer_id"`
	FirstEpoch int16 `json:"first_epoch"`
}

// Banner is the line the service starts with.
func (c Config) Banner() string {
	mode := "exactly-once: one transaction per batch"
	if c.NoEOS {
		mode = "no transactions: write, then commit offsets"
	}
	return fmt.Sprintf("kitchen %s: %s -> %s, group %s, %s", c.ID, c.In, c.Out, c.Group, mode)
}

// Summary is the line the service ends with.
func (s Stats) Summary(id string) string {
	return fmt.Sprintf("kitchen %s: %d orders cooked, %d transactions committed, %d aborted and read again", id, s.Orders, s.Batches, s.Aborted)
}

// Run serves until ctx ends, Idle passes without orders, or the crash. It
// fails when the cluster does not serve it: a write refused or not
// acknowledged within cfg.Bound() (the batch is aborted), a read refused or
// unanswered.
func Run(ctx context.Context, cfg brewkit.Config, c Config, say func(string)) (Stats, error) {
	k := &kitchen{c: c, cfg: cfg, say: say}
	var s *session
	var err error
	if c.NoEOS {
		s, err = k.atLeastOnce(ctx, cfg)
	} else {
		s, err = k.exactlyOnce(ctx, cfg)
	}
	if err != nil {
		return k.st, err
	}
	defer s.close()
	err = k.serve(ctx, s)
	return k.st, err
}

// kitchen is one run of the service: its config, what it did, and whether
// the batch at hand is the one to crash in.
type kitchen struct {
	c     Config
	cfg   brewkit.Config
	say   func(string)
	st    Stats
	armed atomic.Bool
	fetch fetchGate
}

// crashAt kills the process if the batch at hand is the one to crash in and
// it has reached the stage s where the crash is due.
func (k *kitchen) crashAt(s Stage) {
	if k.armed.Load() && k.c.CrashAt == s {
		brewkit.Crash()
	}
}

// onWrite is called with each request the client writes to a broker: the
// stages inside the client are requests on the wire.
func (k *kitchen) onWrite(key int16) {
	switch {
	case key == 28 || (k.c.NoEOS && key == 8): // TxnOffsetCommit, OffsetCommit
		k.crashAt(Offsets)
	case key == 26 && !k.c.NoEOS: // EndTxn
		k.crashAt(Commit)
	}
}

// fetchMaxWait is how long a broker holds a fetch with nothing new: an idle
// service hears "nothing new" each second (see fetchGate).
const fetchMaxWait = time.Second

// consumerOpts are the group consumer's options in both modes.
func (k *kitchen) consumerOpts() []kgo.Opt {
	return []kgo.Opt{
		kgo.ConsumerGroup(k.c.Group),
		kgo.ConsumeTopics(k.c.In),
		kgo.InstanceID(k.c.ID),
		kgo.SessionTimeout(6 * time.Second),
		kgo.HeartbeatInterval(time.Second),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), // orders may come from transactions too
		kgo.FetchMaxWait(fetchMaxWait),
		kgo.KeepRetryableFetchErrors(),
		kgo.WithHooks(hooks{k}),
	}
}

// session is how a batch is read, written and made final, the same steps in
// both modes.
type session struct {
	cl      *kgo.Client
	begin   func() error
	produce func(context.Context, *kgo.Record, func(*kgo.Record, error))
	flush   func(context.Context) error
	// end makes the batch final: ok is false when a write failed. It
	// reports whether the batch was committed.
	end   func(ctx context.Context, ok bool) (bool, error)
	close func()
}

// atLeastOnce is the session without transactions: the service produces the
// events, then commits the offsets, and a crash between the two repeats the batch.
func (k *kitchen) atLeastOnce(ctx context.Context, cfg brewkit.Config) (*session, error) {
	cl, _, err := brewkit.Connect(ctx, cfg, append(k.consumerOpts(), kgo.DisableAutoCommit())...)
	if err != nil {
		return nil, err
	}
	s := &session{cl: cl, produce: cl.Produce, flush: cl.Flush, close: cl.Close}
	s.begin = func() error { return nil }
	s.end = func(ctx context.Context, ok bool) (bool, error) {
		if !ok { // a write failed: read the batch again
			cl.SetOffsets(cl.CommittedOffsets())
			return false, nil
		}
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			return false, fmt.Errorf("committing offsets: %w", err)
		}
		k.crashAt(Commit)
		return true, nil
	}
	return s, nil
}

// exactlyOnce is the session of a transactional id: each batch is one
// transaction, and its kitchen events and consumed offsets commit together
// or not at all.
func (k *kitchen) exactlyOnce(ctx context.Context, cfg brewkit.Config) (*session, error) {
	gts, err := kgo.NewGroupTransactSession(brewkit.ClientOpts(cfg, append(k.consumerOpts(),
		brewkit.TransactionalID(k.c.ID),
		kgo.TransactionTimeout(30*time.Second),
	)...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka client for %s: %w", cfg.Bootstrap(), err)
	}
	cl := gts.Client()
	if err := brewkit.Ping(ctx, cfg, cl); err != nil {
		gts.Close()
		return nil, err
	}
	// Take the transactional id over before consuming: InitProducerId
	// fences an earlier process with this id and aborts its open
	// transaction, whose pending offset commit would otherwise keep
	// this consumer's offset fetch waiting (KIP-447).
	if k.st.Producer, k.st.FirstEpoch, err = cl.ProducerID(ctx); err != nil {
		gts.Close()
		return nil, fmt.Errorf("initializing transactional id %s: %w", k.c.ID, err)
	}
	k.say(fmt.Sprintf("kitchen %s: producer id %d, epoch %d", k.c.ID, k.st.Producer, k.st.FirstEpoch))
	return &session{
		cl: cl, begin: gts.Begin, produce: gts.Produce, flush: cl.Flush, close: gts.Close,
		end: func(ctx context.Context, ok bool) (bool, error) {
			return gts.End(ctx, kgo.TransactionEndTry(ok))
		},
	}, nil
}

// serve polls batches of up to c.Batch orders and cooks each one, until ctx
// ends or c.Idle passes without orders.
func (k *kitchen) serve(ctx context.Context, s *session) error {
	var check brewkit.FetchCheck
	handled := 0
	idleSince := time.Now()
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs, err := check.Poll(pctx, s.cl, k.c.Batch)
		cancel()
		if ctx.Err() != nil {
			break
		}
		if err == nil {
			err = k.fetch.stuck(k.cfg.Bound())
		}
		if err != nil {
			return err
		}
		recs := fs.Records()
		if len(recs) == 0 {
			// Idle only on fetches the brokers answered with nothing:
			// records that wait behind a fetch nobody answers are
			// not "no orders".
			if k.c.Idle > 0 && time.Since(idleSince) >= k.c.Idle && k.fetch.answeredSince(idleSince) {
				return nil
			}
			continue
		}
		idleSince = time.Now()
		handled += len(recs)
		k.armed.Store(k.c.CrashAfter > 0 && handled >= k.c.CrashAfter)
		k.crashAt(Poll)
		if err := k.cook(ctx, s, recs); err != nil {
			return err
		}
	}
	return nil
}

// cook is one batch: it begins it, writes the kitchen events of its orders,
// and ends it, committed or (after a failed write) aborted. A write Kafka
// retries (a leader moving) is read again; one it refuses (no permission,
// no acknowledgement in time) ends the service.
func (k *kitchen) cook(ctx context.Context, s *session, recs []*kgo.Record) error {
	if err := s.begin(); err != nil {
		return fmt.Errorf("beginning a transaction: %w", err)
	}
	writeErr, err := k.writeEvents(ctx, s, recs)
	if err != nil {
		return err
	}
	again := writeErr == nil || kerr.IsRetriable(writeErr)
	if writeErr != nil && again {
		k.say(fmt.Sprintf("kitchen %s: writing kitchen events failed (%v); the batch is read again", k.c.ID, writeErr))
	}
	var committed bool
	err = txns.Within(ctx, k.cfg, func(ctx context.Context) (err error) {
		committed, err = s.end(ctx, writeErr == nil)
		return err
	})
	if !again {
		return fmt.Errorf("writing kitchen events to %s: %w", k.c.Out, writeErr)
	}
	if err != nil {
		return fmt.Errorf("ending the batch: %w", err)
	}
	if !committed {
		k.st.Aborted++
		return nil
	}
	k.st.Batches++
	k.st.Orders += len(recs)
	k.st.Events += 2 * len(recs)
	return nil
}

// writeEvents produces KitchenStarted and OrderReady for each order of the
// batch and flushes them. writeErr is what the brokers refused (the batch is
// then read again); err ends the service.
func (k *kitchen) writeEvents(ctx context.Context, s *session, recs []*kgo.Record) (writeErr, err error) {
	var mu sync.Mutex
	promise := func(_ *kgo.Record, err error) {
		mu.Lock()
		defer mu.Unlock()
		if writeErr == nil {
			writeErr = err // the first: the others are its echo
		}
	}
	for i, r := range recs {
		order, err := brewkit.DecodeEvent(r)
		if err != nil {
			return nil, err
		}
		for _, e := range Cook(order, SourceOf(r), time.Now()) {
			s.produce(ctx, e.Record(k.c.Out), promise)
		}
		if i == 0 && k.armed.Load() && k.c.CrashAt == Produce {
			txns.Within(ctx, k.cfg, s.flush) //nolint:errcheck // written for sure, then the crash
			k.crashAt(Produce)
		}
	}
	// A transactional write has no delivery timeout: the wait is bounded
	// here. What is still in flight is left to the transaction timeout.
	if err := txns.Within(ctx, k.cfg, s.flush); err != nil {
		return nil, fmt.Errorf("writing kitchen events to %s: %w", k.c.Out, err)
	}
	k.crashAt(Flushed)
	mu.Lock()
	defer mu.Unlock()
	return writeErr, nil
}

// Cook is what the kitchen makes of an order: KitchenStarted, then
// OrderReady, each naming the order record it answers.
func Cook(order brewkit.Event, source string, at time.Time) []brewkit.Event {
	started := brewkit.Event{Type: brewkit.KitchenStarted, V: brewkit.EventVersion, OrderID: order.OrderID, ShopID: order.ShopID, At: at.UTC(), Source: source}
	ready := started
	ready.Type = brewkit.OrderReady
	return []brewkit.Event{started, ready}
}

// SourceOf names a record by its place in the log: topic/partition@offset.
// Order ids repeat across the course's runs; places do not.
func SourceOf(r *kgo.Record) string { return fmt.Sprintf("%s/%d@%d", r.Topic, r.Partition, r.Offset) }

// hooks are the service's client hooks: each request written (the crash
// stages inside the client) and each fetch answered (the idle clock).
type hooks struct{ k *kitchen }

const fetchKey = 1 // kmsg.Fetch

func (h hooks) OnBrokerWrite(meta kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	if key == fetchKey {
		h.k.fetch.wrote(meta.NodeID)
	}
	h.k.onWrite(key)
}

func (h hooks) OnBrokerRead(meta kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == fetchKey {
		h.k.fetch.read(meta.NodeID, err)
	}
}

// fetchGate follows the service's fetches node by node: since when one
// waits for an answer, and when each node last answered.
type fetchGate struct {
	mu       sync.Mutex
	waiting  map[int32]time.Time // the first fetch written since the node's last answer
	answered map[int32]time.Time
}

func (g *fetchGate) wrote(node int32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.init()
	if _, ok := g.waiting[node]; !ok {
		g.waiting[node] = time.Now()
	}
}

func (g *fetchGate) read(node int32, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.init()
	switch {
	case err == nil:
		delete(g.waiting, node)
		g.answered[node] = time.Now()
	case !errors.Is(err, os.ErrDeadlineExceeded):
		delete(g.waiting, node) // a connection that died: kgo dials again and asks again
	}
}

func (g *fetchGate) init() {
	if g.waiting == nil {
		g.waiting, g.answered = map[int32]time.Time{}, map[int32]time.Time{}
	}
}

// answeredSince reports whether every node with a fetch waiting has answered
// one since t.
func (g *fetchGate) answeredSince(t time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for node := range g.waiting {
		if !g.answered[node].After(t) {
			return false
		}
	}
	return true
}

// stuck is an error naming a node that has left a fetch unanswered for
// longer than bound past the fetch's own wait (FetchCheck.Poll says so too,
// unless the node answers the group's other requests meanwhile).
func (g *fetchGate) stuck(bound time.Duration) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for node, since := range g.waiting {
		if waited := time.Since(since); waited > bound+fetchMaxWait {
			return fmt.Errorf("node %d has answered no fetch for %s (%s=%s): is it paused or overloaded? `make status` shows the nodes",
				node, waited.Round(100*time.Millisecond), brewkit.EnvTimeout, bound)
		}
	}
	return nil
}

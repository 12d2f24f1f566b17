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
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
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

// Run serves until ctx ends, Idle passes without orders, or the crash.
func Run(ctx context.Context, cfg brewkit.Config, c Config, say func(string)) (Stats, error) {
	k := &kitchen{c: c, say: say}
	var s *session
	var err error
	if c.NoEOS {
		s, err = k.atLeastOnce(cfg)
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
	say   func(string)
	st    Stats
	armed atomic.Bool
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
		brewkit.ConsumeErrors(),
		kgo.WithHooks(writeHook(k.onWrite)),
	}
}

// session is how a batch is read, written and made final, the same steps in
// both modes.
type session struct {
	poll    func(ctx context.Context, max int) kgo.Fetches
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
func (k *kitchen) atLeastOnce(cfg brewkit.Config) (*session, error) {
	cl, err := brewkit.NewClient(cfg, append(k.consumerOpts(), kgo.DisableAutoCommit())...)
	if err != nil {
		return nil, err
	}
	s := &session{poll: cl.PollRecords, produce: cl.Produce, flush: cl.Flush, close: cl.Close}
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
		poll: gts.PollRecords, begin: gts.Begin, produce: gts.Produce, flush: cl.Flush, close: gts.Close,
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
		fs := s.poll(pctx, k.c.Batch)
		cancel()
		if ctx.Err() != nil {
			break
		}
		if err := check.Err(fs); err != nil {
			return err
		}
		recs := fs.Records()
		if len(recs) == 0 {
			if k.c.Idle > 0 && time.Since(idleSince) >= k.c.Idle {
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
// and ends it, committed or (after a failed write) aborted to be read again.
func (k *kitchen) cook(ctx context.Context, s *session, recs []*kgo.Record) error {
	if err := s.begin(); err != nil {
		return fmt.Errorf("beginning a transaction: %w", err)
	}
	writeErr, err := k.writeEvents(ctx, s, recs)
	if err != nil {
		return err
	}
	if writeErr != nil {
		k.say(fmt.Sprintf("kitchen %s: writing kitchen events failed (%v); the batch is read again", k.c.ID, writeErr))
	}
	committed, err := s.end(ctx, writeErr == nil)
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
		if err != nil {
			mu.Lock()
			writeErr = errors.Join(writeErr, err)
			mu.Unlock()
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
			s.flush(ctx) //nolint:errcheck // written for sure, then the crash
			k.crashAt(Produce)
		}
	}
	if err := s.flush(ctx); err != nil {
		return nil, fmt.Errorf("writing kitchen events: %w", err)
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

// writeHook calls its function with the key of each request written to a broker.
type writeHook func(key int16)

func (h writeHook) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err == nil {
		h(key)
	}
}

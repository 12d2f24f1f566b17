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
	var st Stats
	var armed atomic.Bool // this batch is the one to crash in
	crashAt := func(s Stage) {
		if armed.Load() && c.CrashAt == s {
			brewkit.Crash()
		}
	}
	// The stages inside the client: the request is written to the broker.
	onWrite := func(key int16) {
		switch {
		case key == 28 || (c.NoEOS && key == 8): // TxnOffsetCommit, OffsetCommit
			crashAt(Offsets)
		case key == 26 && !c.NoEOS: // EndTxn
			crashAt(Commit)
		}
	}
	opts := []kgo.Opt{
		kgo.ConsumerGroup(c.Group),
		kgo.ConsumeTopics(c.In),
		kgo.InstanceID(c.ID),
		kgo.SessionTimeout(6 * time.Second),
		kgo.HeartbeatInterval(time.Second),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), // orders may come from transactions too
		brewkit.ConsumeErrors(),
		kgo.WithHooks(writeHook(onWrite)),
	}

	var (
		poll    func(context.Context, int) kgo.Fetches
		begin   func() error
		produce func(context.Context, *kgo.Record, func(*kgo.Record, error))
		flush   func(context.Context) error
		end     func(context.Context, bool) (bool, error)
		cl      *kgo.Client
	)
	if c.NoEOS {
		var err error
		cl, err = brewkit.NewClient(cfg, append(opts, kgo.DisableAutoCommit())...)
		if err != nil {
			return st, err
		}
		defer cl.Close()
		poll, produce, flush = cl.PollRecords, cl.Produce, cl.Flush
		begin = func() error { return nil }
		end = func(ctx context.Context, ok bool) (bool, error) {
			if !ok { // a write failed: read the batch again
				cl.SetOffsets(cl.CommittedOffsets())
				return false, nil
			}
			if err := cl.CommitUncommittedOffsets(ctx); err != nil {
				return false, fmt.Errorf("committing offsets: %w", err)
			}
			crashAt(Commit)
			return true, nil
		}
	} else {
		s, err := kgo.NewGroupTransactSession(brewkit.ClientOpts(cfg, append(opts,
			kgo.TransactionalID(c.ID),
			kgo.TransactionTimeout(30*time.Second),
		)...)...)
		if err != nil {
			return st, fmt.Errorf("kafka client for %s: %w", cfg.Bootstrap(), err)
		}
		defer s.Close()
		cl = s.Client()
		// Take the transactional id over before consuming: InitProducerId
		// fences an earlier process with this id and aborts its open
		// transaction, whose pending offset commit would otherwise keep
		// this consumer's offset fetch waiting (KIP-447).
		if st.Producer, st.FirstEpoch, err = cl.ProducerID(ctx); err != nil {
			return st, fmt.Errorf("initializing transactional id %s: %w", c.ID, err)
		}
		say(fmt.Sprintf("kitchen %s: producer id %d, epoch %d", c.ID, st.Producer, st.FirstEpoch))
		poll, begin, produce, flush = s.PollRecords, s.Begin, s.Produce, cl.Flush
		end = func(ctx context.Context, ok bool) (bool, error) {
			return s.End(ctx, kgo.TransactionEndTry(ok))
		}
	}

	var check brewkit.FetchCheck
	handled := 0
	idleSince := time.Now()
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := poll(pctx, c.Batch)
		cancel()
		if ctx.Err() != nil {
			break
		}
		if err := check.Err(fs); err != nil {
			return st, err
		}
		recs := fs.Records()
		if len(recs) == 0 {
			if c.Idle > 0 && time.Since(idleSince) >= c.Idle {
				return st, nil
			}
			continue
		}
		idleSince = time.Now()
		handled += len(recs)
		armed.Store(c.CrashAfter > 0 && handled >= c.CrashAfter)
		crashAt(Poll)

		if err := begin(); err != nil {
			return st, fmt.Errorf("beginning a transaction: %w", err)
		}
		var mu sync.Mutex
		var writeErr error
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
				return st, err
			}
			for _, e := range Cook(order, SourceOf(r), time.Now()) {
				produce(ctx, e.Record(c.Out), promise)
			}
			if i == 0 && armed.Load() && c.CrashAt == Produce {
				flush(ctx) //nolint:errcheck // written for sure, then the crash
				crashAt(Produce)
			}
		}
		if err := flush(ctx); err != nil {
			return st, fmt.Errorf("writing kitchen events: %w", err)
		}
		crashAt(Flushed)
		mu.Lock()
		ok := writeErr == nil
		mu.Unlock()
		if !ok {
			say(fmt.Sprintf("kitchen %s: writing kitchen events failed (%v); the batch is read again", c.ID, writeErr))
		}
		committed, err := end(ctx, ok)
		if err != nil {
			return st, fmt.Errorf("ending the batch: %w", err)
		}
		if !committed {
			st.Aborted++
			continue
		}
		st.Batches++
		st.Orders += len(recs)
		st.Events += 2 * len(recs)
	}
	return st, nil
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

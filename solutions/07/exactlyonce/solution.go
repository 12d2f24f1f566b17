// The reference solution of exercise 07/exactlyonce: one transaction per
// batch through kgo.GroupTransactSession, whose End commits the batch's
// offsets inside the transaction (TxnOffsetCommit) before it commits the
// transaction (EndTxn). A crash anywhere leaves the events and the offsets
// both committed or both aborted.
package exactlyonce

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Batch is the most orders one transaction may hold.
const Batch = 10

func Run(ctx context.Context, cfg brewkit.Config, group []kgo.Opt, txnID string, cook func(order *kgo.Record) []*kgo.Record) error {
	s, err := kgo.NewGroupTransactSession(brewkit.ClientOpts(cfg, append(slices.Clone(group),
		brewkit.TransactionalID(txnID),
		kgo.TransactionTimeout(30*time.Second),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), // orders may come from transactions too
	)...)...)
	if err != nil {
		return err
	}
	defer s.Close()
	// Take the transactional id over: InitProducerId fences a killed
	// kitchen with this id and aborts its open transaction, whose offsets
	// the group's offset fetch would otherwise wait for.
	if _, _, err := s.Client().ProducerID(ctx); err != nil {
		return fmt.Errorf("taking over transactional id %s: %w", txnID, err)
	}
	for {
		fs := s.PollRecords(ctx, Batch)
		if ctx.Err() != nil {
			return nil
		}
		if err := fs.Err0(); err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		if fs.NumRecords() == 0 {
			continue
		}
		if err := s.Begin(); err != nil {
			return err
		}
		var mu sync.Mutex
		var failed error
		fs.EachRecord(func(order *kgo.Record) {
			for _, r := range cook(order) {
				s.Produce(ctx, r, func(_ *kgo.Record, err error) {
					mu.Lock()
					defer mu.Unlock()
					if err != nil && failed == nil {
						failed = err
					}
				})
			}
		})
		// End flushes, sends the offsets in the transaction, then
		// commits; it aborts instead after a rebalance, and the session
		// reads the batch again.
		mu.Lock()
		commit := kgo.TransactionEndTry(failed == nil)
		mu.Unlock()
		if _, err := s.End(ctx, commit); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

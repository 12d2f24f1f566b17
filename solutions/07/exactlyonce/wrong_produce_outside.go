// A plausible wrong solution of exercise 07/exactlyonce: the offsets go in
// the group transaction session, but the events are written by a producer of
// their own (idempotent, acks=all: lecture 05), outside the transaction. An
// aborted transaction cannot take them back: after a crash before the commit
// the batch is read and cooked again, and read_committed sees both cookings.
// The grader must fail it.
package exactlyonce

import (
	"context"
	"errors"
	"slices"
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
	)...)...)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, _, err := s.Client().ProducerID(ctx); err != nil {
		return err
	}
	events, err := brewkit.NewClient(cfg)
	if err != nil {
		return err
	}
	defer events.Close()
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
		var err error
		fs.EachRecord(func(order *kgo.Record) {
			if err == nil {
				err = events.ProduceSync(ctx, cook(order)...).FirstErr()
			}
		})
		if err != nil {
			return err
		}
		if _, err := s.End(ctx, kgo.TryCommit); err != nil {
			return err
		}
	}
}

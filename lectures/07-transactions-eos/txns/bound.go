package txns

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// A transactional client has no delivery timeout on a record in flight (kgo
// refuses one beside a transactional id), so the demos bound each wait for
// the brokers themselves, by cfg.Bound().

// NoAckError says that the brokers acknowledged nothing within Bound.
type NoAckError struct{ Bound time.Duration }

func (e *NoAckError) Error() string {
	return fmt.Sprintf("no acknowledgement within %s=%s (is a node paused or overloaded? `make status` shows the nodes)",
		brewkit.EnvTimeout, e.Bound)
}

// produce writes recs in cl's open transaction and waits for every
// acknowledgement, up to cfg.Bound(); it returns the first record's error.
func produce(ctx context.Context, cfg brewkit.Config, cl *kgo.Client, recs ...*kgo.Record) error {
	var mu sync.Mutex
	var first error
	for _, r := range recs {
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if first == nil {
				first = err
			}
		})
	}
	if err := flush(ctx, cfg, cl); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	return first
}

// flush is cl.Flush, up to cfg.Bound().
func flush(ctx context.Context, cfg brewkit.Config, cl *kgo.Client) error {
	return Within(ctx, cfg, cl.Flush)
}

// end is cl.EndTransaction, up to cfg.Bound().
func end(ctx context.Context, cfg brewkit.Config, cl *kgo.Client, commit kgo.TransactionEndTry) error {
	return Within(ctx, cfg, func(ctx context.Context) error { return cl.EndTransaction(ctx, commit) })
}

// abort aborts cl's open transaction after a write failed, up to
// cfg.Bound(), even when ctx has ended. A write nobody answered is still in
// flight: it is left to the transaction timeout, which aborts on the broker.
func abort(ctx context.Context, cfg brewkit.Config, cl *kgo.Client, writeErr error) {
	if errors.As(writeErr, new(*NoAckError)) {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if Within(ctx, cfg, cl.AbortBufferedRecords) == nil {
		end(ctx, cfg, cl, kgo.TryAbort) //nolint:errcheck // the write's error is the one to report
	}
}

// Within runs fn with a context that ends after cfg.Bound(); when the bound
// (not ctx) ended it, the error is NoAckError.
func Within(ctx context.Context, cfg brewkit.Config, fn func(context.Context) error) error {
	bctx, cancel := context.WithTimeout(ctx, cfg.Bound())
	defer cancel()
	err := fn(bctx)
	if err != nil && ctx.Err() == nil && bctx.Err() != nil {
		return &NoAckError{Bound: cfg.Bound()}
	}
	return err
}

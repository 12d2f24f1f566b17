package txns

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/txnlog"
)

// RunZombie starts a producer with a transactional id and writes in a
// transaction; then a second producer with the same id starts (a restarted
// service, while the old one still lives: a long GC pause, a network split)
// and writes too. The old one's commit is refused; the new one's commits, and
// a read_committed reader sees only its record.
func RunZombie(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, topic string) (Zombie, error) {
	z := Zombie{ID: fmt.Sprintf("brew.zombie.%d", rand.Uint32()%1e6)}
	newProducer := func() (*kgo.Client, error) {
		return brewkit.NewClient(cfg, brewkit.TransactionalID(z.ID), kgo.TransactionTimeout(30*time.Second), kgo.RecordRetries(3))
	}
	old, err := newProducer()
	if err != nil {
		return z, err
	}
	defer old.Close()
	if z.OldProducer, z.OldEpoch, err = old.ProducerID(ctx); err != nil {
		return z, fmt.Errorf("old producer: %w", err)
	}
	if err := old.BeginTransaction(); err != nil {
		return z, err
	}
	if err := produce(ctx, cfg, old, &kgo.Record{Topic: topic, Value: []byte("from the old one")}); err != nil {
		abort(ctx, cfg, old, err)
		return z, fmt.Errorf("old producer writing: %w", err)
	}

	young, err := newProducer()
	if err != nil {
		return z, err
	}
	defer young.Close()
	// InitProducerId with the same id: the coordinator bumps the epoch and
	// aborts the old producer's open transaction.
	if z.NewProducer, z.NewEpoch, err = young.ProducerID(ctx); err != nil {
		return z, fmt.Errorf("new producer: %w", err)
	}

	err = end(ctx, cfg, old, kgo.TryCommit)
	if err != nil && (errors.As(err, new(*NoAckError)) || ctx.Err() != nil) {
		return z, fmt.Errorf("old producer committing: %w", err)
	}
	z.OldFenced = FencedError(err)
	z.OldCommitErr = "ok (not fenced!)"
	if err != nil {
		z.OldCommitErr = err.Error()
	}

	if err := young.BeginTransaction(); err != nil {
		return z, err
	}
	if err := produce(ctx, cfg, young, &kgo.Record{Topic: topic, Value: []byte("from the new one")}); err != nil {
		abort(ctx, cfg, young, err)
		return z, fmt.Errorf("new producer writing: %w", err)
	}
	if err := end(ctx, cfg, young, kgo.TryCommit); err != nil {
		return z, fmt.Errorf("new producer committing: %w", err)
	}
	z.NewCommitted = true

	if err := txnlog.Settle(ctx, adm, topic, 10*time.Second); err != nil {
		return z, err
	}
	recs, err := txnlog.Read(ctx, cfg, adm, topic, true)
	if err != nil {
		return z, err
	}
	for _, r := range recs {
		if !r.Attrs.IsControl() {
			z.Visible = append(z.Visible, string(r.Value))
		}
	}
	return z, nil
}

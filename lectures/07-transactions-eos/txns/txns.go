// Package txns holds the lecture's small transaction demos: an order and its
// payment written to two topics in one transaction, what read_committed and
// read_uncommitted consumers see of committed, aborted and open transactions,
// and a zombie producer fenced by its successor.
package txns

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Outcome is one transaction of Write.
type Outcome struct {
	N         int    `json:"n"`
	OrderID   string `json:"order_id"`
	Committed bool   `json:"committed"`
	Producer  int64  `json:"producer_id"`
	Epoch     int16  `json:"epoch"`
}

func (o Outcome) String() string {
	verb := "committed"
	if !o.Committed {
		verb = "aborted  "
	}
	return fmt.Sprintf("txn %2d  %s  OrderPlaced + PaymentReceived for %s  (producer id %d, epoch %d)", o.N, verb, o.OrderID, o.Producer, o.Epoch)
}

// WriteConfig is a run of Write.
type WriteConfig struct {
	ID               string // transactional id
	Orders, Payments string // topics
	Transactions     int
	AbortEvery       int // abort every Nth transaction (0: none)
	FirstOrder       int64
}

// Write runs c.Transactions transactions, each writing one order's
// OrderPlaced and PaymentReceived to two topics, aborting every AbortEvery-th.
func Write(ctx context.Context, cfg brewkit.Config, c WriteConfig, report func(Outcome)) error {
	cl, _, err := brewkit.Connect(ctx, cfg, brewkit.TransactionalID(c.ID), kgo.TransactionTimeout(30*time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	for n := 1; n <= c.Transactions; n++ {
		if err := cl.BeginTransaction(); err != nil {
			return fmt.Errorf("transaction %d: %w", n, err)
		}
		order := brewkit.NewOrder(rng, c.FirstOrder+int64(n)-1, time.Now())
		paid := order
		paid.Type, paid.Items = brewkit.PaymentReceived, nil
		if err := produce(ctx, cfg, cl, order.Record(c.Orders), paid.Record(c.Payments)); err != nil {
			abort(ctx, cfg, cl, err)
			return fmt.Errorf("transaction %d: writing: %w", n, err)
		}
		commit := c.AbortEvery == 0 || n%c.AbortEvery != 0
		// Read the id and epoch before ending: with transactions v2 the
		// broker bumps the epoch as each transaction ends.
		id, epoch, err := cl.ProducerID(ctx)
		if err != nil {
			return err
		}
		if err := end(ctx, cfg, cl, kgo.TransactionEndTry(commit)); err != nil {
			return fmt.Errorf("transaction %d: ending: %w", n, err)
		}
		report(Outcome{N: n, OrderID: order.OrderID, Committed: commit, Producer: id, Epoch: epoch})
	}
	return nil
}

// Zombie is what happened to two producers with one transactional id.
type Zombie struct {
	ID           string   `json:"transactional_id"`
	OldProducer  int64    `json:"old_producer_id"`
	OldEpoch     int16    `json:"old_epoch"`
	NewProducer  int64    `json:"new_producer_id"`
	NewEpoch     int16    `json:"new_epoch"`
	OldCommitErr string   `json:"old_commit_error"`
	OldFenced    bool     `json:"old_fenced"`
	NewCommitted bool     `json:"new_committed"`
	Visible      []string `json:"visible_to_read_committed"`
}

// FencedError reports whether err says a newer producer took the
// transactional id over.
func FencedError(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch)
}

// Print writes the zombie story.
func (z Zombie) Print(w io.Writer) {
	fmt.Fprintf(w, "transactional id %s\n", z.ID)
	fmt.Fprintf(w, "  old producer: id %d, epoch %d: begins, writes \"from the old one\"\n", z.OldProducer, z.OldEpoch)
	fmt.Fprintf(w, "  new producer: id %d, epoch %d: InitProducerId with the same id fences the old one\n", z.NewProducer, z.NewEpoch)
	fmt.Fprintf(w, "  old producer commits: %s\n", z.OldCommitErr)
	fmt.Fprintf(w, "  new producer commits: %v\n", okWord(z.NewCommitted))
	fmt.Fprintf(w, "  read_committed sees: %q\n", z.Visible)
}

func okWord(b bool) string {
	if b {
		return "ok"
	}
	return "failed"
}

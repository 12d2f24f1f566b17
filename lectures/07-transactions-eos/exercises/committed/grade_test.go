package committed

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/txnlog"
)

// Limit is how long Paid may take; the grader waits a little longer for it.
const Limit = 15 * time.Second

const (
	hintIsolation = "read with read_committed (kgo.FetchIsolationLevel(kgo.ReadCommitted())): kgo, like the Java client, reads uncommitted by default, " +
		"and that returns every record written, aborted and open ones too (lecture 07: isolation levels)"
	hintLSO = "a read_committed reader gets no further than the last stable offset, the start of the oldest open transaction: read up to it, " +
		"not to the high watermark (kadm's ListCommittedOffsets lists it; markers take offsets too: kgo.KeepControlRecords shows them) (lecture 07: isolation levels)"
)

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.RealKafka)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	topic := env.FreshTopic(t, "ex-committed-payments", 1)
	tx := env.Client(t, brewkit.TransactionalID(fmt.Sprintf("brew.ex-committed-%d", rand.IntN(1e6))),
		kgo.TransactionTimeout(time.Minute), kgo.DefaultProduceTopic(topic))
	rng := rand.New(rand.NewPCG(7, 2))
	n := int64(0)
	var committed, aborted []string
	// write begins a transaction and writes k payments in it.
	write := func(k int) []string {
		t.Helper()
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for range k {
			n++
			p := brewkit.NewOrder(rng, n, time.Now())
			p.Type, p.Items = brewkit.PaymentReceived, nil
			if err := tx.ProduceSync(ctx, p.Record(topic)).FirstErr(); err != nil {
				t.Fatalf("writing a payment: %v", err)
			}
			ids = append(ids, p.OrderID)
		}
		return ids
	}
	end := func(commit bool) {
		t.Helper()
		if err := tx.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("ending a transaction: %v", err)
		}
	}
	for _, txn := range []struct {
		k      int
		commit bool
	}{{2, true}, {1, false}, {1, true}, {2, false}, {1, true}} {
		ids := write(txn.k)
		end(txn.commit)
		if txn.commit {
			committed = append(committed, ids...)
		} else {
			aborted = append(aborted, ids...)
		}
	}
	// The markers land a moment after EndTransaction returns.
	if err := txnlog.Settle(ctx, env.Admin(t), topic, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	open := write(1)

	check := func(when string, want, never []string, openIDs []string) {
		t.Helper()
		got, took, err := call(ctx, env.Config, topic)
		switch {
		case took >= Limit:
			grade.Fail(t, hintLSO, "%s, Paid had not returned %s after it was called", when, took.Round(time.Second))
		case err != nil:
			grade.Fail(t, "read the topic from its first offset; an error is for a topic that cannot be read", "%s, Paid returned an error: %v", when, err)
		}
		if bad := both(got, never); len(bad) > 0 {
			grade.Fail(t, hintIsolation, "%s, Paid returned %s, of aborted transactions", when, strings.Join(bad, ", "))
		}
		if bad := both(got, openIDs); len(bad) > 0 {
			grade.Fail(t, hintIsolation, "%s, Paid returned %s, of a transaction still open (it may yet abort)", when, strings.Join(bad, ", "))
		}
		if !slices.Equal(got, want) {
			grade.Fail(t, "read every committed payment from the start of the topic, each once, in log order",
				"%s, Paid returned [%s]; the payments committed are [%s]", when, strings.Join(got, " "), strings.Join(want, " "))
		}
	}
	check("while a transaction was open", committed, aborted, open)

	end(true)
	if err := txnlog.Settle(ctx, env.Admin(t), topic, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	check("once the open transaction had committed", append(slices.Clone(committed), open...), aborted, nil)
}

// call runs Paid with a ctx that ends after Limit, and waits for it a little
// longer: took is how long it ran (at least that, if it never returned).
func call(ctx context.Context, cfg brewkit.Config, topic string) (ids []string, took time.Duration, err error) {
	type result struct {
		ids []string
		err error
	}
	pctx, cancel := context.WithTimeout(ctx, Limit)
	defer cancel()
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		ids, err := Paid(pctx, cfg, topic)
		done <- result{ids, err}
	}()
	select {
	case r := <-done:
		return r.ids, time.Since(start), r.err
	case <-time.After(Limit + 5*time.Second):
		return nil, time.Since(start), nil
	}
}

// both lists the ids in got that are also in ids.
func both(got, ids []string) []string {
	var in []string
	for _, id := range got {
		if slices.Contains(ids, id) && !slices.Contains(in, id) {
			in = append(in, id)
		}
	}
	return in
}

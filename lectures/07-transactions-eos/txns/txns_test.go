package txns_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/txns"
)

// Committed, aborted, committed and an open transaction: read_uncommitted
// sees every record, read_committed only the committed ones, both see the
// markers, and read_committed stops at the last stable offset, which lags
// the high watermark until the open transaction commits.
func TestIsolationLevelsReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	iso, err := txns.RunIsolation(ctx, env.Config, env.Admin(t))
	require.NoError(t, err)
	require.Len(t, iso.Views, 2)
	for _, v := range iso.Views {
		var got []string
		for _, r := range v.Rows {
			got = append(got, r.Record[:strings.IndexByte(r.Record+" ", ' ')]+" "+r.Uncommitted+" "+r.Committed)
		}
		kind := "OrderPlaced"
		if strings.Contains(v.Topic, "payments") {
			kind = "PaymentReceived"
		}
		require.Equal(t, []string{
			kind + " yes yes", "COMMIT marker marker", // txn 1
			kind + " yes -", "ABORT marker marker", // txn 2: aborted
			kind + " yes yes", "COMMIT marker marker", // txn 3
			kind + " yes not yet", // txn 4: open
		}, got, v.Topic)
		require.Equal(t, int64(7), v.HW, "%s: six offsets, then the open transaction's record", v.Topic)
		require.Equal(t, int64(6), v.LSO, "%s: read_committed waits at the open transaction", v.Topic)
		require.Equal(t, int64(8), v.HWAfter, "%s: the commit marker takes an offset", v.Topic)
		require.Equal(t, v.HWAfter, v.LSOAfter)
	}
	var b strings.Builder
	iso.Print(&b)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "read-committed", b.String())
}

// A second producer with the same transactional id fences the first: its
// commit is refused and its record never becomes visible.
func TestZombieIsFencedReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := env.FreshTopic(t, "zombie", 1)
	z, err := txns.RunZombie(ctx, env.Config, env.Admin(t), topic)
	require.NoError(t, err)
	t.Logf("%+v", z)
	require.True(t, z.OldFenced, "the old producer's commit: %s", z.OldCommitErr)
	require.Equal(t, z.OldProducer, z.NewProducer, "the same transactional id keeps its producer id")
	require.Greater(t, z.NewEpoch, z.OldEpoch, "the new producer has a higher epoch")
	require.True(t, z.NewCommitted)
	require.Equal(t, []string{"from the new one"}, z.Visible)
	if !env.Simulated {
		var b strings.Builder
		z.Print(&b)
		brewtest.MatchesReadme(t, "../README.md", "zombie", b.String())
	}
}

// Six transactions, every third aborted. On Kafka 4.x (transactions v2) the
// producer keeps its id and the broker bumps its epoch as each transaction
// ends.
func TestWriteCommitsAndAbortsReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := txns.WriteConfig{ID: fmt.Sprintf("brew.test.txn-producer.%d", time.Now().UnixNano()), Orders: env.FreshTopic(t, "txn-orders", 1), Payments: env.FreshTopic(t, "txn-payments", 1),
		Transactions: 6, AbortEvery: 3, FirstOrder: 1}
	var b strings.Builder
	fmt.Fprintf(&b, "transactional id %s: %s + %s\n", c.ID, c.Orders, c.Payments)
	var outs []txns.Outcome
	require.NoError(t, txns.Write(ctx, env.Config, c, func(o txns.Outcome) {
		outs = append(outs, o)
		fmt.Fprintln(&b, o)
	}))
	t.Log("\n" + b.String())
	var committed []bool
	for _, o := range outs {
		committed = append(committed, o.Committed)
		require.Equal(t, outs[0].Producer, o.Producer, "one producer id for the transactional id")
	}
	require.Equal(t, []bool{true, true, false, true, true, false}, committed)
	if env.Simulated {
		return
	}
	for i, o := range outs {
		require.Equal(t, int16(i), o.Epoch, "transactions v2: a new id starts at epoch 0, and every transaction gets a new one")
	}
	brewtest.MatchesReadme(t, "../README.md", "txn-producer", b.String())
}

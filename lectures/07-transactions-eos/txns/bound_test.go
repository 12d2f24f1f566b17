package txns_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/txns"
)

// A transactional write nobody acknowledges ends each demo within the bound
// (a transactional client has no delivery timeout of its own), and closing
// its client does not wait for it either.
func TestUnansweredWritesEndWithinTheBound(t *testing.T) {
	env := brewtest.Sim(t)
	cfg := env.Config
	cfg.Timeout = time.Second
	adm := env.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := brewkit.EnsureTopics(ctx, adm, brewkit.Orders, brewkit.Payments)
	require.NoError(t, err)
	topic := env.FreshTopic(t, "bound", 1)
	env.Sim.Hang(kmsg.Produce)
	for name, run := range map[string]func() error{
		"txn-producer": func() error {
			c := txns.WriteConfig{ID: "brew.test.bound", Orders: brewkit.Orders.Name, Payments: brewkit.Payments.Name, Transactions: 2}
			return txns.Write(ctx, cfg, c, func(txns.Outcome) {})
		},
		"read-committed": func() error { _, err := txns.RunIsolation(ctx, cfg, adm); return err },
		"zombie":         func() error { _, err := txns.RunZombie(ctx, cfg, adm, topic); return err },
	} {
		start := time.Now()
		err := run()
		took := time.Since(start)
		t.Logf("%s: after %s: %v", name, took.Round(10*time.Millisecond), err)
		require.True(t, errors.As(err, new(*txns.NoAckError)), "%s: %v", name, err)
		require.Less(t, took, 5*time.Second, name)
	}
}

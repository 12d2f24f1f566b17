package promo_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/02-topics-partitions/promo"
)

func config(env *brewtest.Env) promo.Config {
	c := promo.Defaults
	c.Duration = 10 * time.Second
	if env.Simulated {
		c.Duration = 4 * time.Second // the fast tier keeps it short
	}
	return c
}

// One partition: one consumer works, two sit idle, the lag grows. Six
// partitions: the three share the work and drain at least twice as fast.
// Each consumer serves exactly 50 orders a second however late its sleeps
// wake (promo.Run counts the work from when the last order was done): CI
// saw 22 ms an order on a busy machine with a plain 20 ms sleep, which left
// six partitions 2% above the incoming rate instead of 12%, and 1.96x.
func TestMorePartitionsLetTheGroupKeepUpReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	c := config(env)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var frame string // the last live frame while orders come in
	one, err := promo.Run(ctx, env.Config, c, 1, func(v promo.View) {
		if v.Producing {
			var b strings.Builder
			v.Print(&b, c)
			frame = b.String()
		}
	})
	require.NoError(t, err)
	six, err := promo.Run(ctx, env.Config, c, 6, nil)
	require.NoError(t, err)

	for _, r := range []promo.Result{one, six} {
		require.Equal(t, r.Produced, r.Processed, "%d partitions: every order processed", r.Partitions)
		require.InDelta(t, c.PerMinute/60*c.Duration.Seconds(), float64(r.Produced), c.PerMinute/60*c.Duration.Seconds()*0.1)
	}
	require.Equal(t, 2, one.Idle, "1 partition, 3 consumers: two idle")
	require.Zero(t, six.Idle, "6 partitions, 3 consumers: none idle")
	ratio := one.Drain.Seconds() / six.Drain.Seconds()
	t.Logf("drained in %s with 1 partition, %s with 6: %.2fx; max lag %d vs %d", one.Drain, six.Drain, ratio, one.MaxLag, six.MaxLag)
	for _, cs := range six.Consumers { // what each barista did, if the ratio falls short
		t.Logf("6 partitions: consumer %d owned %v and processed %d", cs.ID, cs.Partitions, cs.Processed)
	}
	require.GreaterOrEqual(t, ratio, 2.0)

	brewtest.MatchesReadme(t, "../README.md", "promo-live", frame)
	var b strings.Builder
	promo.PrintSummary(&b, []promo.Result{one, six})
	if env.Simulated {
		return // the README shows a 10-second run; the fast tier runs 4 seconds
	}
	brewtest.MatchesReadme(t, "../README.md", "promo-summary", b.String())
}

// Exercise 2 of the README: 4 partitions and 6 consumers leave how many idle?
func TestExerciseIdleConsumers(t *testing.T) {
	env := brewtest.Cluster(t)
	c := promo.Defaults
	c.Duration, c.Consumers = 2*time.Second, 6
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := promo.Run(ctx, env.Config, c, 4, nil)
	require.NoError(t, err)
	want, err := strconv.Atoi(brewtest.ReadmeAnswer(t, "../README.md", "idle-4-partitions-6-consumers"))
	require.NoError(t, err)
	require.Equal(t, want, r.Idle)
}

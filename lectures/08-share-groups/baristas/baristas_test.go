package baristas_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/08-share-groups/baristas"
)

// Six baristas on one partition: in a share group all six take tickets and
// every ticket is done; in a consumer group one barista does them all.
func TestShareGroupSpreadsOnePartitionReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := baristas.Defaults
	share, err := baristas.Run(ctx, env.Config, c, func(s string) { t.Log(s) })
	require.NoError(t, err)
	t.Logf("share: %+v", share)
	require.Equal(t, c.Tickets, share.Done, "every ticket done")
	require.Equal(t, c.Consumers, share.Busy(), "every barista got work")
	var b strings.Builder
	share.Print(&b)
	brewtest.MatchesReadme(t, "../README.md", "baristas", b.String())

	c.Mode = baristas.Group
	group, err := baristas.Run(ctx, env.Config, c, func(s string) { t.Log(s) })
	require.NoError(t, err)
	t.Logf("group: %+v", group)
	require.Equal(t, c.Tickets, group.Done)
	require.Equal(t, 1, group.Busy(), "one partition, one busy consumer")
	b.Reset()
	group.Print(&b)
	brewtest.MatchesReadme(t, "../README.md", "baristas-group", b.String())
}

// The lecture's table: on one partition, a share group gets faster with
// more consumers, all of them busy; a consumer group keeps one busy.
func TestThroughputTableReadmeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	// A measurement: it takes the cluster alone. Beside two other modules'
	// tests on two cores, six share consumers (a round trip per ticket) lost
	// more to the load than one consumer group member did, and the ratios
	// below fell under 2.5 (the real tier on Kafka 4.4: 88 against 40 tickets/s).
	env.Exclusive(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// Six share consumers serve the 120 tickets in about 0.7 s: one stall
	// of this machine (the containers tier runs beside the real tier in CI)
	// halves that row, and noise only ever slows a run down. So the table
	// is measured up to three times, until the ratios hold; every run must
	// serve every ticket with the busy consumers the lesson says.
	var rs []baristas.Result
	for attempt := 1; ; attempt++ {
		var err error
		rs, err = baristas.Table(ctx, env.Config, baristas.Defaults, []int{1, 3, 6}, func(s string) { t.Log(s) })
		require.NoError(t, err)
		require.Len(t, rs, 6)
		for _, r := range rs {
			require.Equal(t, r.Config.Tickets, r.Done, "%s x%d: every ticket", r.Config.Mode, r.Config.Consumers)
			want := r.Config.Consumers
			if r.Config.Mode == baristas.Group {
				want = 1
			}
			require.Equal(t, want, r.Busy(), "%s x%d: busy consumers", r.Config.Mode, r.Config.Consumers)
		}
		share1, share6, group6 := rs[0], rs[2], rs[5]
		if share6.PerSecond > 2.5*share1.PerSecond && share6.PerSecond > 2.5*group6.PerSecond {
			break
		}
		if attempt == 3 {
			require.Greater(t, share6.PerSecond, 2.5*share1.PerSecond, "six share consumers at least 2.5x one")
			require.Greater(t, share6.PerSecond, 2.5*group6.PerSecond, "six share consumers at least 2.5x six in a consumer group")
		}
		t.Logf("attempt %d: share x6 %.0f/s, share x1 %.0f/s, group x6 %.0f/s: under 2.5x, measuring again", attempt, share6.PerSecond, share1.PerSecond, group6.PerSecond)
	}
	var b strings.Builder
	baristas.PrintTable(&b, rs)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "baristas-table", b.String())
}

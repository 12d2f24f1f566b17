package poison_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/08-share-groups/poison"
)

// A ticket released by every barista comes back with its delivery count up
// by one each time and stops at the limit; a rejected ticket never comes
// back; every other ticket is accepted once; the group's start offset passes
// them all.
func TestPoisonIsArchivedAtTheLimitReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := poison.Defaults
	res, err := poison.Run(ctx, env.Config, c, func(s string) { t.Log(s) })
	require.NoError(t, err)

	var counts []int32
	for _, d := range res.Of(c.Poison) {
		require.Equal(t, "release", d.Action)
		counts = append(counts, d.Count)
	}
	require.Equal(t, []int32{1, 2, 3, 4, 5}, counts, "delivered up to the limit, one more each time")
	rejected := res.Of(c.Reject)
	require.Len(t, rejected, 1, "a rejected ticket is not delivered again")
	require.Equal(t, int32(1), rejected[0].Count)
	require.Equal(t, c.Tickets-2, res.Accepted)
	require.Zero(t, res.Redelivered, "the other tickets: one delivery each")

	var b strings.Builder
	res.Print(&b)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "poison", b.String())
}

// Since Kafka 4.3 the delivery limit is a group config (KIP-1240): a group
// that sets share.delivery.count.limit=3 archives its poison ticket after
// three deliveries while the broker's default stays 5.
func TestGroupSetsItsOwnDeliveryLimit(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t) // kfake reads the limit from its broker config only
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := poison.Defaults
	c.Limit = 3
	res, err := poison.Run(ctx, env.Config, c, func(s string) { t.Log(s) })
	require.NoError(t, err)
	var counts []int32
	for _, d := range res.Of(c.Poison) {
		counts = append(counts, d.Count)
	}
	require.Equal(t, []int32{1, 2, 3}, counts, "archived at the group's limit")
	require.Equal(t, c.Tickets-2, res.Accepted)
}

package groupconfigs_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/08-share-groups/groupconfigs"
)

// The share group's configs Kafka 4.4 keeps per group, with their defaults,
// as the README lists them; a value set on a group is described as
// GROUP_CONFIG; a lock or a delivery limit past the broker's bounds is
// refused, one at a bound is taken.
func TestShareGroupConfigsReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t) // kfake knows fewer group configs, and describes no defaults
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := groupconfigs.Run(ctx, env.Config, "", false)
	require.NoError(t, err)
	var b strings.Builder
	res.Print(&b)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "group-configs", b.String())

	cl, err := brewkit.NewClient(env.Config)
	require.NoError(t, err)
	defer cl.Close()
	group := fmt.Sprintf("brew.tickets.configs.%06d", rand.IntN(1_000_000))
	t.Cleanup(func() { brewkit.DeleteGroupConfigs(context.Background(), cl, group) }) //nolint:errcheck // a leftover config is harmless
	require.NoError(t, groupconfigs.Set(ctx, cl, group, map[string]string{"share.isolation.level": "read_committed"}))
	cs, err := groupconfigs.Describe(ctx, cl, group)
	require.NoError(t, err)
	c, ok := groupconfigs.Lookup(cs, "share.isolation.level")
	require.True(t, ok)
	require.Equal(t, groupconfigs.Config{Name: "share.isolation.level", Value: "read_committed", Source: "GROUP_CONFIG"}, c)

	// The broker's bounds: group.share.min/max.record.lock.duration.ms
	// (15 s, 60 s) and group.share.min/max.delivery.count.limit (2, 10).
	for k, v := range map[string]string{
		"share.record.lock.duration.ms": "10000",
		"share.delivery.count.limit":    "11",
	} {
		err := brewkit.SetGroupConfigs(ctx, cl, group, map[string]string{k: v})
		require.ErrorIs(t, err, kerr.InvalidConfig, "%s=%s is out of the broker's bounds", k, v)
		t.Log(err)
	}
	for k, v := range map[string]string{
		"share.record.lock.duration.ms": "60000",
		"share.delivery.count.limit":    "2",
	} {
		require.NoError(t, brewkit.SetGroupConfigs(ctx, cl, group, map[string]string{k: v}), "%s=%s is within the bounds", k, v)
	}
}

package brewkit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/sim"
)

// A fresh topic has its prefix, its partitions on three replicas, an hour's
// retention and the configs asked for; drop deletes it, also once the run's
// context is cancelled.
func TestFreshTopicAndItsDrop(t *testing.T) {
	c, err := sim.New(sim.Options{})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	cl, err := brewkit.NewClient(c.Config())
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	name, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.test.fresh.", Partitions: 2, Configs: map[string]string{"cleanup.policy": "compact"}})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(name, "brew.test.fresh."), name)
	other, dropOther, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.test.fresh.", Partitions: 1})
	require.NoError(t, err)
	require.NotEqual(t, name, other)
	defer dropOther(ctx) //nolint:errcheck // the simulation goes with the test

	td, err := adm.ListTopics(ctx, name)
	require.NoError(t, err)
	require.Len(t, td[name].Partitions, 2)
	for _, p := range td[name].Partitions {
		require.Len(t, p.Replicas, 3)
	}
	rc, err := adm.DescribeTopicConfigs(ctx, name)
	require.NoError(t, err)
	got := map[string]string{}
	for _, c := range rc[0].Configs {
		got[c.Key] = c.MaybeValue()
	}
	require.Equal(t, "3600000", got["retention.ms"])
	require.Equal(t, "compact", got["cleanup.policy"])

	done, stop := context.WithCancel(ctx)
	stop() // Ctrl-C: drop still deletes the topic
	require.NoError(t, drop(done))
	td, err = adm.ListTopics(ctx)
	require.NoError(t, err)
	require.False(t, td.Has(name), "%s is still there", name)
}

// A topic the cluster refuses is an error that names it and the configs asked for.
func TestFreshTopicRefused(t *testing.T) {
	c, err := sim.New(sim.Options{})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	cl, err := brewkit.NewClient(c.Config())
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err = brewkit.FreshTopic(ctx, kadm.NewClient(cl), brewkit.Fresh{Prefix: "brew.test.fresh.", Partitions: 1, RF: 4, Configs: map[string]string{"min.insync.replicas": "3"}})
	require.ErrorContains(t, err, "creating brew.test.fresh.")
	require.ErrorContains(t, err, " with min.insync.replicas=3: ")
}

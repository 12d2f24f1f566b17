package grow_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/02-topics-partitions/grow"
	"github.com/brew-course/kafka/lectures/02-topics-partitions/partition"
)

func TestGrowMovesKeysAndShrinkIsRefused(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := grow.Defaults
	c.Keys = 40
	res, err := grow.Run(ctx, env.Config, c)
	require.NoError(t, err)
	moved := 0
	for _, k := range res.Keys {
		require.Equal(t, partition.ForKey([]byte(k.Key), 3), k.Before, "%s before", k.Key)
		require.Equal(t, partition.ForKey([]byte(k.Key), 6), k.After, "%s after", k.Key)
		if k.Before != k.After {
			moved++
		}
	}
	require.Equal(t, moved, res.Moved)
	require.Positive(t, res.Moved, "some of 40 keys move when 3 partitions become 6")
	require.True(t, strings.HasPrefix(res.ShrinkErr, "INVALID_PARTITIONS"), "shrink refused with %q", res.ShrinkErr)
	require.NotContains(t, res.ShrinkErr, "below 1", "the client library's text for the code, not the broker's reason")
	if !env.Simulated {
		// Kafka's own reason, from its CreatePartitions answer (kfake sends none).
		want := fmt.Sprintf("INVALID_PARTITIONS: The topic %s currently has 6 partition(s); 2 would not be an increase.", res.Topic)
		require.Equal(t, want, res.ShrinkErr)
	}
}

// Exercise 3 of the README: growing 3 -> 6 moves half of the keys.
func TestExerciseShareOfKeysMoved(t *testing.T) {
	keys := make([][]byte, 20000)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("ord-%07d", i))
	}
	share := grow.MovedShare(keys, 3, 6)
	require.InDelta(t, 0.5, share, 0.02)
	answer := brewtest.ReadmeAnswer(t, "../README.md", "moved-3-to-6")
	require.Equal(t, fmt.Sprintf("%.0f%%", share*100), strings.TrimSpace(answer))
}

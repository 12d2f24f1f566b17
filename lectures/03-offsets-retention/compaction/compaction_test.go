package compaction_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/03-offsets-retention/compaction"
)

// Compaction keeps exactly the last value of every key at its original
// offset, and drops the tombstoned key after delete.retention.ms.
func TestCompactionKeepsTheLatestValuePerKeyReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := compaction.Run(ctx, env.Config, 2*time.Minute, func(s string) { t.Log(s) })
	require.NoError(t, err)

	last := compaction.Latest(res.Before)
	require.Len(t, last, len(compaction.Products))
	require.True(t, last[compaction.Deleted].Tombstone())

	require.True(t, compaction.OnePerKey(res.Compacted))
	for _, e := range res.Compacted {
		require.Equal(t, last[e.Key], e, "kept: the last record of %s, at its original offset", e.Key)
	}
	for _, p := range compaction.Products {
		if p != compaction.Deleted {
			require.Contains(t, res.Compacted, last[p])
		}
	}
	for _, e := range res.After {
		require.NotEqual(t, compaction.Deleted, e.Key, "the tombstoned key is gone")
		require.Equal(t, last[e.Key], e)
	}
	require.Len(t, res.After, len(compaction.Products)-1)
	t.Logf("compacted after %s, tombstone gone after %s", res.CompactedAfter, res.TombstoneGone)
	if !env.Simulated {
		require.Contains(t, res.KeylessErr, "INVALID_RECORD", "real Kafka refuses a keyless record on a compacted topic")
		var b strings.Builder
		res.Print(&b)
		brewtest.MatchesReadme(t, "../README.md", "compaction", b.String())
	}
}

package idempotence_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/05-acks-durability/idempotence"
)

// A paused follower makes acks=all requests time out after the leader wrote
// them: without idempotence the retries are stored again, with it none is.
func TestIdempotenceStopsRetriesFromDuplicatingReadmeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := idempotence.Run(ctx, env.Config, env.NodeControl(t), idempotence.Defaults, func(s string) { t.Log(s) })
	require.NoError(t, err)
	t.Logf("off: acked %d stored %d duplicated %d; on: acked %d stored %d duplicated %d",
		res.Off.Acked, res.Off.Stored, res.Off.Duplicated, res.On.Acked, res.On.Stored, res.On.Duplicated)
	for _, m := range []idempotence.Mode{res.Off, res.On} {
		require.Equal(t, idempotence.Defaults.Records, m.Acked, "every order acknowledged in the end")
		require.Zero(t, m.Missing, "nothing acknowledged is missing")
	}
	require.Positive(t, res.Off.Duplicated, "without idempotence the retried batches are stored again")
	require.Zero(t, res.On.Duplicated, "with idempotence nothing is stored twice")
	require.Equal(t, int64(-1), res.Off.Batches[0].ProducerID)
	require.GreaterOrEqual(t, res.On.Batches[0].ProducerID, int64(0))
	var b strings.Builder
	res.Print(&b)
	brewtest.MatchesReadme(t, "../README.md", "idempotence", b.String())
}

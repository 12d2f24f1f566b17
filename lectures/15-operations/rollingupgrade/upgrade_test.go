package rollingupgrade_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/15-operations/lab/labtest"
	"github.com/brew-course/kafka/lectures/15-operations/rollingupgrade"
)

// On a lab cluster of its own, Kafka 4.3.1 rolls to the course's release one
// node at a time: every node supports the newer metadata.version after its
// roll, finalize is accepted and the downgrade refused, and the witness
// loses and duplicates nothing. make rolling-upgrade prints what the README
// shows. (Alone: three more JVMs on the machine.)
func TestRollingUpgradeReadmeAlone(t *testing.T) {
	s := labtest.Stand(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	res, err := rollingupgrade.Run(ctx, s, 100, func(line string) { t.Log(line) })
	require.NoError(t, err)
	var b strings.Builder
	res.Print(&b)
	t.Log("\n" + b.String())

	require.Len(t, res.Rolls, 3)
	for _, r := range res.Rolls {
		require.Equal(t, res.Finalized, r.Before, "node %d supported the old release's level before its roll", r.Node)
		require.Equal(t, res.Final, r.After, "node %d supports the level finalized at the end", r.Node)
		require.LessOrEqual(t, r.Back, r.Full)
	}
	require.NotEqual(t, res.Finalized, res.Final, "metadata.version moved")
	require.Equal(t, "accepted", res.Finalize)
	require.True(t, res.Refused, "the downgrade is refused: %s", res.Downgrade)
	require.True(t, res.Witness.OK(), "witness: %s", res.Witness)
	require.Zero(t, res.Witness.Failed, "witness: %s", res.Witness)
	require.Positive(t, res.Witness.Read)
	require.True(t, res.OK())
	brewtest.MatchesReadme(t, "../README.md", "rolling-upgrade", b.String())
}

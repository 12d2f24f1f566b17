package state_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/14-stream-processing/state"
)

// make state: a restart onto the local store reads nothing of the
// changelog, one with the store deleted reads the changelog (every record
// but the transactions' markers), and both give the state the service had.
func TestStateReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runs, err := state.Measure(ctx, env.Config, state.Sizes, t.TempDir(), func(s string) { t.Log(s) })
	require.NoError(t, err)
	for _, r := range runs {
		t.Logf("%+v", r)
		require.True(t, r.Same, "%d orders: the restored windows are the ones before", r.Orders)
		require.Zero(t, r.Kept.Records, "%d orders: a restart onto the local store reads nothing", r.Orders)
		require.Positive(t, r.Deleted.Records)
		require.LessOrEqual(t, int64(r.Deleted.Records), r.Changelog)
		require.Positive(t, r.Windows)
	}
	var b strings.Builder
	state.Print(&b, runs)
	brewtest.MatchesReadme(t, "../README.md", "state", b.String())
}

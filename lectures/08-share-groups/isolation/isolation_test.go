package isolation_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/08-share-groups/isolation"
)

// Tickets written in three transactions, the second aborted: a share group
// with share.isolation.level=read_uncommitted delivers all six, one with
// read_committed only the four committed ones; each group describes its
// level as set on the group itself.
func TestShareIsolationLevelReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := isolation.Run(ctx, env.Config, isolation.Defaults, func(s string) { t.Log(s) })
	require.NoError(t, err)
	require.Len(t, res.Tickets, 6)
	require.Equal(t, []int{1, 2, 5, 6}, res.Committed())
	require.Len(t, res.Groups, 2)

	uncommitted, committed := res.Groups[0], res.Groups[1]
	require.Equal(t, isolation.ReadUncommitted, uncommitted.Level)
	require.Equal(t, isolation.ReadCommitted, committed.Level)
	for _, g := range res.Groups {
		require.Equal(t, "GROUP_CONFIG", g.Source, "%s: the level is set on the group", g.Name)
	}
	require.ElementsMatch(t, res.All(), uncommitted.Delivered, "read_uncommitted: the aborted tickets too, each once")
	require.ElementsMatch(t, res.Committed(), committed.Delivered, "read_committed: the committed tickets only, each once")

	var b strings.Builder
	res.Print(&b)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "isolation", b.String())
}

package exactlyonce_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/14-stream-processing/analytics"
	"github.com/brew-course/kafka/lectures/14-stream-processing/exactlyonce"
)

// The service, a process of its own, is killed with SIGKILL at ten seeded
// points covering every stage of a batch, and restarted, every other time
// with its local store deleted. With transactions every window equals the
// batch recount and every order was judged once; without, the same crashes
// count some batches twice.
func TestExactlyOnceReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	c := exactlyonce.Defaults
	c.Service = []string{brewtest.BuildCmdAt(t, "../cmd/analytics")}
	c.Dir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()

	eos, err := exactlyonce.Run(ctx, env.Config, c, func(s string) { t.Log(s) })
	require.NoError(t, err)
	died := map[analytics.Stage]int{}
	for _, p := range eos.Points {
		if p.Died {
			died[p.At]++
		}
	}
	require.Len(t, died, len(analytics.Stages), "every stage crashed at least once: %v", died)
	require.True(t, eos.Exact(), "exactly once: %+v", eos)
	require.Equal(t, eos.Written.Meant.TooLate, eos.Recount.TooLate)
	var b strings.Builder
	eos.Print(&b)
	brewtest.MatchesReadme(t, "../README.md", "exactly-once", b.String())

	c.EOS = false
	plain, err := exactlyonce.Run(ctx, env.Config, c, func(s string) { t.Log(s) })
	require.NoError(t, err)
	t.Logf("no-eos: judged %d of %d, %d windows differ, %+d cents", plain.Counted, plain.Written.Orders, plain.Differ, plain.Extra)
	require.Greater(t, plain.Counted, plain.Written.Orders, "without transactions a crash between the writes and the commit judges a batch twice")
	require.Positive(t, plain.Differ)
	require.Positive(t, plain.Extra, "the double counts add revenue")
	b.Reset()
	plain.Print(&b)
	brewtest.MatchesReadme(t, "../README.md", "exactly-once-no-eos", b.String())
}

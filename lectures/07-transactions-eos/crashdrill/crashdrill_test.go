package crashdrill_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/crashdrill"
	"github.com/brew-course/kafka/lectures/07-transactions-eos/kitchen"
)

// The kitchen, a process of its own, is killed with SIGKILL at ten seeded
// points that cover every stage of a batch (between produce and commit, and
// with the commit on the wire), and restarted each time. With transactions
// every order is cooked exactly once; without, the same crashes cook some
// twice.
func TestCrashDrillReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	c := crashdrill.Defaults
	c.Kitchen = []string{brewtest.BuildCmdAt(t, "../cmd/kitchen")}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	eos, err := crashdrill.Run(ctx, env.Config, c, func(s string) { t.Log(s) })
	require.NoError(t, err)
	died := map[kitchen.Stage]int{}
	for _, p := range eos.Points {
		if p.Died {
			died[p.At]++
		}
	}
	t.Logf("exactly-once: crashes by stage %v; %+v", died, eos.Report)
	require.Len(t, died, len(kitchen.Stages), "every stage crashed at least once")
	total := 0
	for _, n := range died {
		total += n
	}
	require.GreaterOrEqual(t, total, 10, "at least ten crashes")
	require.Equal(t, c.Orders, eos.Report.Orders)
	require.True(t, eos.Report.OK(), "exactly once: %+v", eos.Report)
	var b strings.Builder
	eos.Print(&b)
	brewtest.MatchesReadme(t, "../README.md", "crash-drill", b.String())

	c.NoEOS = true
	plain, err := crashdrill.Run(ctx, env.Config, c, func(s string) { t.Log(s) })
	require.NoError(t, err)
	t.Logf("no-eos: %+v", plain.Report)
	require.Equal(t, c.Orders, plain.Report.Orders)
	require.Zero(t, plain.Report.Missing, "at-least-once loses nothing")
	require.Positive(t, plain.Report.Duplicated, "without transactions a crash between write and commit cooks twice")
	b.Reset()
	plain.Print(&b)
	brewtest.MatchesReadme(t, "../README.md", "crash-drill-no-eos", b.String())
}

package commitstyles_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/commitstyles"
)

func span(from, to int64) []int64 {
	var out []int64
	for o := from; o <= to; o++ {
		out = append(out, o)
	}
	return out
}

// A consumer process is killed with SIGKILL 15 records into its second batch
// of 20 and started again. What it re-reads or skips is exactly what each
// style's commits left behind.
func TestEachStyleAfterAKillReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	c := commitstyles.Defaults
	c.Consumer = []string{brewtest.BuildCmdAt(t, "../cmd/commit-styles"), "consumer"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	say := func(s string) { t.Log(s) }
	var rows []commitstyles.Row
	if env.Simulated {
		// Side by side on the simulation, to keep the fast tier fast; on
		// real Kafka one after the other, as the README shows them.
		rows = make([]commitstyles.Row, len(commitstyles.Styles))
		errs := make([]error, len(commitstyles.Styles))
		var wg sync.WaitGroup
		for i, st := range commitstyles.Styles {
			wg.Go(func() {
				r, err := commitstyles.Run(ctx, env.Config, c, []commitstyles.Style{st}, say)
				if err == nil {
					rows[i] = r[0]
				}
				errs[i] = err
			})
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
	} else {
		var err error
		rows, err = commitstyles.Run(ctx, env.Config, c, commitstyles.Styles, say)
		require.NoError(t, err)
	}
	require.Len(t, rows, len(commitstyles.Styles))
	by := map[commitstyles.Style]commitstyles.Row{}
	for _, r := range rows {
		require.Equal(t, 35, r.BeforeKill, "%s: killed after the 35th record", r.Style)
		by[r.Style] = r
	}

	// autocommit commits what earlier polls returned: the first batch.
	require.Equal(t, int64(20), by[commitstyles.Auto].ResumedAt)
	require.Equal(t, span(20, 34), by[commitstyles.Auto].Reread)
	require.Empty(t, by[commitstyles.Auto].Skipped)
	require.Equal(t, 1, by[commitstyles.Auto].Commits, "auto: the head moves once, at the second poll")
	require.Zero(t, by[commitstyles.Auto].Waited, "auto: the loop never waits for a commit")

	// greedy autocommit commits the second batch while it is processed.
	require.Equal(t, int64(40), by[commitstyles.Greedy].ResumedAt)
	require.Empty(t, by[commitstyles.Greedy].Reread)
	require.Equal(t, span(35, 39), by[commitstyles.Greedy].Skipped)
	require.Equal(t, 2, by[commitstyles.Greedy].Commits, "greedy: the head moves at each poll, to 20 and to 40")

	// a synchronous commit after each record: only the record being processed.
	require.Equal(t, int64(34), by[commitstyles.Record].ResumedAt)
	require.Equal(t, []int64{34}, by[commitstyles.Record].Reread)
	require.Empty(t, by[commitstyles.Record].Skipped)
	require.Equal(t, 34, by[commitstyles.Record].Commits)
	require.Positive(t, by[commitstyles.Record].Waited)

	// a commit after each batch: the batch being processed.
	require.Equal(t, int64(20), by[commitstyles.Batch].ResumedAt)
	require.Equal(t, span(20, 34), by[commitstyles.Batch].Reread)
	require.Empty(t, by[commitstyles.Batch].Skipped)
	require.Equal(t, 1, by[commitstyles.Batch].Commits)

	// async: at least the record being processed, more if commits were in flight.
	a := by[commitstyles.Async]
	require.Empty(t, a.Skipped)
	require.NotEmpty(t, a.Reread)
	require.Equal(t, span(a.ResumedAt, 34), a.Reread, "async: re-read from the last commit that landed to the kill")
	require.LessOrEqual(t, a.Commits, 34)
	require.Less(t, a.Waited, by[commitstyles.Record].Waited, "async: the loop does not wait for the broker")

	var b strings.Builder
	commitstyles.Print(&b, rows)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "commit-styles", b.String())
}

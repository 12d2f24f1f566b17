package outofrange_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/03-offsets-retention/outofrange"
)

// A committed offset below the log start: the first fetch at it is
// OFFSET_OUT_OF_RANGE, and auto.offset.reset decides where the consumer goes
// on: earliest at the new log start, re-reading every record still stored;
// latest at the log end, skipping them.
func TestResetWhenTheCommittedOffsetIsGoneReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out strings.Builder
	res, err := outofrange.Run(ctx, env.Config, func(s string) {
		t.Log(s)
		out.WriteString(s + "\n")
	})
	require.NoError(t, err)
	require.Equal(t, int64(outofrange.LogStart), res.LogStart)
	require.Equal(t, int64(outofrange.Written), res.LogEnd)
	require.Len(t, res.Groups, 2)
	earliest, latest := res.Groups[0], res.Groups[1]
	for _, g := range res.Groups {
		require.Equal(t, int64(outofrange.Committed), g.Committed, "%s: the commit outlives its record", g.Name)
		require.Equal(t, g.Committed, g.Refused, "%s: the first fetch, at the committed offset, is refused", g.Name)
	}
	require.Equal(t, "earliest", earliest.Reset)
	require.Equal(t, res.LogStart, earliest.ResumedAt)
	require.Equal(t, res.LogStart, earliest.FirstRead)
	require.Equal(t, int(res.LogEnd-res.LogStart), earliest.Read, "earliest re-reads every record still stored")
	require.Equal(t, "latest", latest.Reset)
	require.Equal(t, res.LogEnd, latest.ResumedAt)
	require.Equal(t, res.LogEnd, latest.FirstRead, "latest skips every record still stored")
	require.Equal(t, 1, latest.Read)

	out.WriteString("\n")
	res.Print(&out)
	t.Logf("output:\n%s", out.String())
	if !env.Simulated {
		brewtest.MatchesReadme(t, "../README.md", "out-of-range", out.String())
	}
}

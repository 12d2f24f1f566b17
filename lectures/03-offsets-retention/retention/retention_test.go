package retention_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/stand"

	"github.com/brew-course/kafka/lectures/03-offsets-retention/retention"
)

// checkInterval is the stands' log.retention.check.interval.ms.
const checkInterval = 5 * time.Second

func run(t *testing.T, env *brewtest.Env, c retention.Config) (retention.Result, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), c.Duration+time.Minute)
	defer cancel()
	var out strings.Builder
	res, err := retention.Run(ctx, env.Config, c, func(s string) {
		t.Log(s)
		out.WriteString(s + "\n")
	})
	require.NoError(t, err)
	require.NotEmpty(t, res.Steps, "the log start offset never moved")
	for i := 1; i < len(res.Steps); i++ {
		require.Greater(t, res.Steps[i].To, res.Steps[i-1].To)
	}
	require.Equal(t, res.Deleted, res.StartNow, "DeleteRecords moves the log start to exactly the offset asked for")
	if !env.Simulated && env.Stand(t).Current() == stand.Native {
		checked, ok := res.OnBoundary()
		require.Positive(t, checked, "segment files were not seen on the native stand")
		require.True(t, ok, "the log start moved off a segment boundary: %+v", res.Steps)
	}
	return res, out.String()
}

// retention.ms: whole closed segments go once their newest record is older
// than retention.ms, at the next retention check.
func TestRetentionByTimeReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	c := retention.Defaults // make retention, which the README shows
	if env.Simulated {
		c.Retention, c.Segment, c.Duration = 2*time.Second, time.Second, 6*time.Second
	}
	res, out := run(t, env, c)
	if !env.Simulated {
		brewtest.MatchesReadme(t, "../README.md", "retention", out)
	}
	bound := c.Retention + c.Segment + checkInterval + 5*time.Second
	require.Less(t, res.FirstMove, bound, "first move after %s, want under retention + segment + check interval + 5 s", res.FirstMove)
	t.Logf("retention.ms=%s: the log start first moved %s after the first write", c.Retention, res.FirstMove)
}

// retention.bytes: the oldest segments go once the partition outgrows it.
// kfake does not apply retention.bytes, so this is real-only.
func TestRetentionByBytes(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	c := retention.Defaults
	c.By, c.Bytes, c.Segment, c.Duration = "bytes", 32<<10, 2*time.Second, 20*time.Second
	res, _ := run(t, env, c)
	filled := time.Duration(float64(c.Bytes) / float64(c.Rate*c.Value) * float64(time.Second))
	bound := filled + c.Segment + checkInterval + 5*time.Second
	require.Less(t, res.FirstMove, bound, "first move after %s, want under fill time + segment + check interval + 5 s", res.FirstMove)
	t.Logf("retention.bytes=%d: the log start first moved %s after the first write", c.Bytes, res.FirstMove)
}

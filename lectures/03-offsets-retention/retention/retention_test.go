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
	// The log outgrows retention.bytes after about Bytes/Value records (each
	// takes at least its value on disk): at c.Rate, in filled. On a busy
	// machine the producer writes slower than c.Rate (a CI run wrote 159
	// records in the 16.8 s before the first move, half of 20 a second), so
	// the log outgrows it later: then the time to write those records at
	// the rate it did write is the fill time. The bound is on Kafka: one
	// segment roll and one retention check after the log outgrew it.
	filled := time.Duration(float64(c.Bytes) / float64(c.Rate*c.Value) * float64(time.Second))
	if end := res.Steps[0].End; end > 0 {
		need := float64(c.Bytes)/float64(c.Value) + 1
		if wrote := time.Duration(need / float64(end) * float64(res.FirstMove)); wrote > filled {
			filled = wrote
		}
	}
	bound := filled + c.Segment + checkInterval + 5*time.Second
	require.Less(t, res.FirstMove, bound, "first move after %s, want under fill time (%s) + segment + check interval + 5 s", res.FirstMove, filled)
	t.Logf("retention.bytes=%d: the log start first moved %s after the first write", c.Bytes, res.FirstMove)
}

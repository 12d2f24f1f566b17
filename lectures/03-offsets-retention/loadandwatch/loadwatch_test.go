package loadandwatch_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/03-offsets-retention/loadandwatch"
	"github.com/brew-course/kafka/lectures/03-offsets-retention/offsets"
)

// Stop and start again: the group picks up at its committed offsets.
func TestRestartResumesFromCommittedOffsets(t *testing.T) {
	env := brewtest.Cluster(t)
	c := loadandwatch.Config{Topic: env.FreshTopic(t, "resume", 3), Group: fmt.Sprintf("brew.test.resume-%d", time.Now().UnixNano()),
		Rate: 40, Work: time.Millisecond, Duration: 4 * time.Second}
	ctx := context.Background()
	var lines []string
	first, err := loadandwatch.Run(ctx, env.Config, c, func(s string) { lines = append(lines, s) }, nil)
	require.NoError(t, err)
	require.Contains(t, lines[0], "no committed offsets")
	require.Positive(t, first.Consumed)
	committed := map[int32]int64{}
	for _, p := range first.Final {
		if p.Committed > 0 {
			committed[p.ID] = p.Committed
		}
	}
	require.NotEmpty(t, committed)

	lines = nil
	second, err := loadandwatch.Run(ctx, env.Config, c, func(s string) { lines = append(lines, s) }, func([]offsets.Partition) {})
	require.NoError(t, err)
	require.Contains(t, lines[0], "resumes from its committed offsets")
	require.Equal(t, committed, second.ResumedFrom)
	for p, at := range second.FirstRead {
		if from, ok := committed[p]; ok {
			require.Equal(t, from, at, "partition %d: the first record read after the restart", p)
		}
	}
}

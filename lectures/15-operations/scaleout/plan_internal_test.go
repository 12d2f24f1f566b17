package scaleout

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The copy ends at the first sample holding the final size, not when Kafka
// calls the reassignment complete.
func TestCopyRateEndsWithTheBytes(t *testing.T) {
	s := []Sample{{0, 0}, {2 * time.Second, 6 << 20}, {4 * time.Second, 12 << 20}, {8 * time.Second, 16 << 20}, {9 * time.Second, 16 << 20}}
	took, rate := copyRate(s, 16<<20)
	require.Equal(t, 8*time.Second, took)
	require.InDelta(t, 2<<20, rate, 1)
	// Node 4 fetched nothing for the first 2 s: that is not copying.
	late := []Sample{{0, 0}, {2 * time.Second, 0}, {4 * time.Second, 4 << 20}, {10 * time.Second, 16 << 20}}
	took, rate = copyRate(late, 16<<20)
	require.Equal(t, 8*time.Second, took)
	require.InDelta(t, 2<<20, rate, 1)
	took, rate = copyRate(s[:1], 16<<20)
	require.Zero(t, took)
	require.Zero(t, rate)
}

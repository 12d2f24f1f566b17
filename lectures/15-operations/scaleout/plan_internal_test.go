package scaleout

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The copy ends at the first sample holding the final size, not when Kafka
// calls the reassignment complete.
func TestCopyRateEndsWithTheBytes(t *testing.T) {
	// From the last empty sample to the last one before the final size.
	s := []Sample{{0, 0}, {2 * time.Second, 4 << 20}, {4 * time.Second, 8 << 20}, {8 * time.Second, 16 << 20}, {10 * time.Second, 17 << 20}, {11 * time.Second, 17 << 20}}
	took, copied, rate := copyRate(s)
	require.Equal(t, 8*time.Second, took)
	require.Equal(t, int64(16<<20), copied)
	require.InDelta(t, 2<<20, rate, 1)
	// Node 4 fetched nothing for the first 2 s: that is not copying.
	late := []Sample{{0, 0}, {2 * time.Second, 0}, {4 * time.Second, 4 << 20}, {10 * time.Second, 16 << 20}, {11 * time.Second, 17 << 20}}
	took, copied, rate = copyRate(late)
	require.Equal(t, 8*time.Second, took)
	require.Equal(t, int64(16<<20), copied)
	require.InDelta(t, 2<<20, rate, 1)
	// Done within one sample: that sample ends it.
	took, copied, _ = copyRate([]Sample{{0, 0}, {time.Second, 3 << 20}})
	require.Equal(t, time.Second, took)
	require.Equal(t, int64(3<<20), copied)
	took, _, rate = copyRate(s[:1])
	require.Zero(t, took)
	require.Zero(t, rate)
}

package delivery_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/05-acks-durability/delivery"
)

// Produce returns before the broker answers; after Flush every record has its
// report: an offset, or for the record over max.message.bytes an error.
func TestEveryRecordGetsItsReportReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := delivery.Run(ctx, env.Config, 5)
	require.NoError(t, err)
	if env.Simulated {
		// kfake answers within microseconds and words MESSAGE_TOO_LARGE
		// more briefly; the README shows real Kafka.
		require.Contains(t, res.Reports[2].Err, "MESSAGE_TOO_LARGE")
		return
	}
	require.Equal(t, 5, res.Unanswered, "Produce returns before any acknowledgement")
	for i, r := range res.Reports {
		if i == 2 {
			require.Contains(t, r.Err, "MESSAGE_TOO_LARGE", "%+v", r)
			continue
		}
		require.Empty(t, r.Err, "%+v", r)
		require.GreaterOrEqual(t, r.Offset, int64(0))
	}
	var b strings.Builder
	res.Print(&b)
	brewtest.MatchesReadme(t, "../README.md", "delivery", b.String())
}

package failures_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/05-acks-durability/failures"
)

// Every error is triggered for real and classified as the README says; the
// headers come back as written.
func TestEveryErrorIsTriggeredAndClassifiedReadmeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := failures.Run(ctx, env.Config, env.NodeControl(t), func(s string) { t.Log(s) })
	require.NoError(t, err)
	want := map[string]struct {
		err       string
		retriable bool
	}{
		"not enough replicas": {"NOT_ENOUGH_REPLICAS", true},
		"record too large":    {"MESSAGE_TOO_LARGE", false},
		"unknown topic":       {"UNKNOWN_TOPIC_OR_PARTITION", true},
		"delivery timeout":    {"kgo.ErrRecordTimeout", false},
	}
	require.Len(t, res.Cases, len(want))
	for _, c := range res.Cases {
		require.Equal(t, want[c.Name].err, c.Err, c.Name)
		require.Equal(t, want[c.Name].retriable, c.Retriable, c.Name)
	}
	require.Equal(t, map[string]string{"trace-id": "4bf92f3577b34da6a3ce929d0e0e4736", "event-type": "OrderPlaced", "schema-version": "1"}, res.Headers)
	var b strings.Builder
	res.Print(&b)
	brewtest.MatchesReadme(t, "../README.md", "errors", b.String())
}

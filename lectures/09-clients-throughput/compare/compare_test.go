package compare_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/09-clients-throughput/compare"
)

// Every client writes the workload and reads every record back; on real
// Kafka Kafka's own Java tools run too. A short run: the numbers are not the
// point here, the harness is.
func TestEveryClientWritesAndReadsBack(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := compare.Defaults
	c.Workload.Records, c.Runs = 3000, 1
	c.Rate, c.PacedRecords = 5000, 2000
	c.Clients = compare.GoClients
	if !env.Simulated {
		c.Clients = compare.Clients
	}
	res, err := compare.Run(ctx, env.Config, c, func(s string) { t.Log(s) })
	require.NoError(t, err)
	require.Len(t, res.Rows, len(c.Clients))
	for _, r := range res.Rows {
		require.Len(t, r.Produce, 1, r.Client)
		require.Equal(t, c.Workload.Records, r.Produce[0].Records, "%s produced", r.Client)
		require.GreaterOrEqual(t, r.Consume[0].Records, c.Workload.Records, "%s read back", r.Client)
		require.Positive(t, r.Produce[0].PerSec, r.Client)
		require.Positive(t, r.Consume[0].PerSec, r.Client)
		require.Len(t, r.Paced, 1, r.Client)
		require.Equal(t, c.PacedRecords, r.Paced[0].Records, "%s produced the latency round", r.Client)
		require.LessOrEqual(t, r.Paced[0].PerSec, 1.1*float64(c.Rate), "%s kept to %d records/s", r.Client, c.Rate)
		require.Positive(t, r.Paced[0].P99, "%s measured latency at %d records/s", r.Client, c.Rate)
	}
	var b strings.Builder
	res.Print(&b)
	t.Log("\n" + b.String())
}

package drill_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/04-replication-isr/drill"
)

// The drill's promise on whichever cluster the tier gives: nothing
// acknowledged with acks=all is lost or duplicated through a leader stop, and
// with a second node down acks=all is refused while acks=1 writes.
func TestDrillLosesAndDuplicatesNothingAcknowledgedReadmeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	nodes := env.NodeControl(t) // before the topic: it may wait for the stand lock
	c := drill.Defaults
	c.Topic = env.FreshTopic(t, "drill", 6)
	c.Second = true
	c.Steady = 2 * time.Second
	if env.Simulated {
		c.Steady = 500 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := drill.Run(ctx, c, env.Config, nodes, func(line string) { t.Log(line) })
	require.NoError(t, err)

	require.Greater(t, rep.Acked, int64(100), "the drill should have produced a steady stream")
	require.Equal(t, rep.Sent, rep.Acked, "every order sent with acks=all while a majority was up is acknowledged")
	require.Zero(t, rep.Failed)
	require.Zero(t, rep.Lost, "acknowledged orders lost")
	require.Zero(t, rep.Duplicated, "orders read twice")
	require.Equal(t, rep.Acked, rep.Read)

	require.NotEqual(t, rep.Stopped, rep.NewLeader)
	require.NotContains(t, rep.ISRAfter, rep.Stopped)
	require.Len(t, rep.ISRAfter, len(rep.ISRBefore)-1)
	require.Contains(t, rep.AcksAllErr, "NOT_ENOUGH_REPLICAS")
	require.Empty(t, rep.AcksOneErr)
	require.GreaterOrEqual(t, rep.AcksOneOffset, int64(0))
	if !env.Simulated {
		require.Less(t, rep.ServingAfter, 30*time.Second)
		require.Less(t, rep.ISRShrunkAfter, 20*time.Second)
	}
	t.Logf("measured: elected %s, serving %s, ISR shrank %s, ISR full again %s after the restarts, slowest ack %s",
		rep.ElectedAfter, rep.ServingAfter, rep.ISRShrunkAfter, rep.ISRFullAfter, rep.MaxAck)

	var out bytes.Buffer
	rep.Print(&out)
	lines := strings.Split(out.String(), "\n")
	require.True(t, slices.ContainsFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, "count") && strings.HasSuffix(strings.TrimSpace(l), "0     0")
	}), "the summary shows lost 0 and duplicated 0:\n%s", out.String())
	if env.Simulated {
		return // the README shows real Kafka; the simulation may drill another partition
	}
	brewtest.MatchesReadme(t, "../README.md", "failover-second", out.String())
}

// The drill's consumer cannot fetch: the drill stops at once with the reason
// instead of reporting every order as lost.
func TestDrillReportsFetchErrorsAlone(t *testing.T) {
	env := brewtest.Sim(t)
	c := drill.Defaults
	c.Topic = env.FreshTopic(t, "drill", 6)
	env.Sim.FailFetches(kerr.TopicAuthorizationFailed)
	c.Steady = 500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err := drill.Run(ctx, c, env.Config, env.NodeControl(t), func(line string) { t.Log(line) })
	require.ErrorContains(t, err, "TOPIC_AUTHORIZATION_FAILED")
	require.ErrorContains(t, err, "nothing can be counted")
	require.Less(t, time.Since(start), 20*time.Second)
}

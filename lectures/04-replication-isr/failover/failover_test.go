package failover_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/04-replication-isr/failover"
)

// The drill's promise on whichever cluster the tier gives: nothing
// acknowledged with acks=all is lost or duplicated through a leader stop, and
// with a second node down acks=all is refused while acks=1 writes.
func TestDrillLosesAndDuplicatesNothingAcknowledgedReadmeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	nodes := env.NodeControl(t) // before the topic: it may wait for the stand lock
	c := failover.Defaults
	c.Topic = env.FreshTopic(t, "drill", 6)
	c.Second = true
	c.Steady = 2 * time.Second
	if env.Simulated {
		c.Steady = 500 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := failover.Run(ctx, c, env.Config, nodes, func(line string) { t.Log(line) })
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
	checkTimeline(t, rep)
	if !env.Simulated && os.Getenv("BREW_UPDATE_RESULTS") == "1" {
		b, err := json.MarshalIndent(rep, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile("../results/drill.json", append(b, '\n'), 0o644))
		t.Log("wrote ../results/drill.json; `make timeline-chart` draws it")
	}

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

// checkTimeline holds the timeline the picture is drawn from to what the
// drill did: the stopped leader leads before its stop and never after, the
// ISR is down to one replica while the second node is stopped, no order is
// acknowledged while the producer is paused, and the ISR ends full.
func checkTimeline(t *testing.T, rep failover.Report) {
	t.Helper()
	require.NotEmpty(t, rep.Timeline)
	at := func(prefix string) time.Duration {
		for _, e := range rep.Events {
			if strings.HasPrefix(e.What, prefix) {
				return e.At
			}
		}
		t.Fatalf("no event %q in %+v", prefix, rep.Events)
		return 0
	}
	stop := at(fmt.Sprintf("stop node %d", rep.Stopped))
	second := at(fmt.Sprintf("pause the producer, stop node %d", rep.Second))
	restart := at(fmt.Sprintf("start node %d", rep.Second))
	var ledBefore, oneInSync bool
	var pausedAcks []int64
	for _, s := range rep.Timeline {
		switch {
		case s.At < stop:
			ledBefore = ledBefore || s.Leader == rep.Stopped
		case s.At > stop+rep.ElectedAfter+time.Second && s.At < restart:
			require.NotEqual(t, rep.Stopped, s.Leader, "the stopped node leads at %s", s.At)
		}
		if s.At > second && s.At < restart {
			oneInSync = oneInSync || len(s.ISR) == 1
			pausedAcks = append(pausedAcks, s.Acked)
		}
	}
	require.True(t, ledBefore, "node %d leads before its stop", rep.Stopped)
	require.True(t, oneInSync, "one replica in sync while the second node is down")
	require.NotEmpty(t, pausedAcks)
	require.Equal(t, pausedAcks[0], pausedAcks[len(pausedAcks)-1], "orders acknowledged while the producer was paused")
	last := rep.Timeline[len(rep.Timeline)-1]
	require.Len(t, last.ISR, len(rep.ISRBefore), "the ISR is full at the end")
	require.Equal(t, rep.Acked, last.Acked, "the last sample counts every acknowledged order")
}

// The drill's consumer cannot fetch: the drill stops at once with the reason
// instead of reporting every order as lost.
func TestDrillReportsFetchErrorsAlone(t *testing.T) {
	env := brewtest.Sim(t)
	c := failover.Defaults
	c.Topic = env.FreshTopic(t, "drill", 6)
	env.Sim.FailFetches(kerr.TopicAuthorizationFailed)
	c.Steady = 500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err := failover.Run(ctx, c, env.Config, env.NodeControl(t), func(line string) { t.Log(line) })
	require.ErrorContains(t, err, "TOPIC_AUTHORIZATION_FAILED")
	require.ErrorContains(t, err, "nothing can be counted")
	require.Less(t, time.Since(start), 20*time.Second)
}

package lostack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/05-acks-durability/lostack"
)

// acks=1 loses what the leader alone acknowledged when it crashes before its
// followers copy it; acks=all, through the same fault, loses nothing.
func TestAcksOneLosesAcknowledgedWritesReadmeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := lostack.Run(ctx, env.Config, env.NodeControl(t), func(s string) { t.Log(s) })
	require.NoError(t, err)
	t.Logf("acks=1: %d acknowledged before the crash, %d lost; acks=all: %d before, %d acknowledged in the end, %d lost",
		res.One.AckedEarly, res.One.Lost, res.All.AckedEarly, res.All.Acked, res.All.Lost)
	require.Equal(t, lostack.Records, res.One.AckedEarly, "acks=1: the leader alone acknowledges at once")
	require.Positive(t, res.One.Lost, "acks=1: acknowledged orders lost with the leader")
	require.Zero(t, res.All.AckedEarly, "acks=all: nothing acknowledged while the followers hang")
	require.Zero(t, res.All.Lost, "acks=all: nothing acknowledged is lost")
	require.Equal(t, lostack.Records, res.All.Acked+res.All.Failed)
	var b strings.Builder
	res.Print(&b)
	brewtest.MatchesReadme(t, "../README.md", "lost-ack", b.String())
}

func TestSimulationSaysItCannotAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	if !env.Simulated {
		t.Skip("about the simulation")
	}
	_, err := lostack.Run(context.Background(), env.Config, env.NodeControl(t), func(string) {})
	require.ErrorIs(t, err, lostack.ErrSimulated)
}

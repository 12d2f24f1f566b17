package elr_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/04-replication-isr/elr"
)

// KIP-966 on real Kafka 4.4: a replica that leaves the ISR while it is
// below min.insync.replicas goes to the ELR, one that leaves it earlier does
// not, and with every ISR member gone the controller elects a leader from
// the ELR, with every acknowledged record. The simulation has no ELR.
func TestELRReadmeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	nodes := env.NodeControl(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := elr.Run(ctx, env.Config, nodes, func(line string) { t.Log(line) })
	require.NoError(t, err)
	require.Len(t, res.Steps, 5)
	type want struct {
		leader   int32
		isr, elr []int32
	}
	for i, w := range []struct{ rf3, rf2 want }{
		{want{3, []int32{1, 2, 3}, []int32{}}, want{1, []int32{1, 2}, []int32{}}},
		// One node down: rf3 still has min ISR, nothing goes to its ELR;
		// rf2 falls below it and keeps node 2 as eligible.
		{want{3, []int32{1, 3}, []int32{}}, want{1, []int32{1}, []int32{2}}},
		// rf3 falls below min ISR when node 1 leaves: 1 is eligible, 2 (gone
		// earlier, while writes went on without it) is not. rf2 loses its
		// last ISR member: no leader, both replicas eligible.
		{want{3, []int32{3}, []int32{1}}, want{-1, []int32{}, []int32{1, 2}}},
		// Node 2 is back: the controller elects it from rf2's ELR.
		{want{3, []int32{2, 3}, []int32{}}, want{2, []int32{2}, []int32{1}}},
		{want{3, []int32{1, 2, 3}, []int32{}}, want{2, []int32{1, 2}, []int32{}}},
	} {
		s := res.Steps[i]
		require.Equal(t, w.rf3.leader, s.RF3.Leader, "%s: rf3 leader", s.What)
		require.Equal(t, w.rf3.isr, s.RF3.ISR, "%s: rf3 ISR", s.What)
		require.Equal(t, w.rf3.elr, s.RF3.ELR, "%s: rf3 ELR", s.What)
		require.Equal(t, w.rf2.leader, s.RF2.Leader, "%s: rf2 leader", s.What)
		require.Equal(t, w.rf2.isr, s.RF2.ISR, "%s: rf2 ISR", s.What)
		require.Equal(t, w.rf2.elr, s.RF2.ELR, "%s: rf2 ELR", s.What)
	}
	require.True(t, res.FromELR, "rf2's leader came from its ELR")
	require.Equal(t, int64(elr.Acked), res.HighWater, "the leader from the ELR has every acknowledged record, readable at once")

	var out bytes.Buffer
	res.Print(&out)
	t.Logf("output:\n%s", out.String())
	brewtest.MatchesReadme(t, "../README.md", "elr", out.String())
}

// The simulation has no ELR: the program shows the topics once, stops no
// node, and says why, instead of claiming an election from an ELR.
func TestELRSimulatedSaysSoAlone(t *testing.T) {
	env := brewtest.Sim(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := elr.Run(ctx, env.Config, env.NodeControl(t), func(line string) { t.Log(line) })
	require.NoError(t, err)
	require.True(t, res.Simulated)
	require.Len(t, res.Steps, 1)
	for n, up := range env.Sim.Up() {
		require.True(t, up, "node %d was stopped", n)
	}
	var out bytes.Buffer
	res.Print(&out)
	require.Contains(t, out.String(), "embedded simulation: kfake keeps no ELR")
	require.NotContains(t, out.String(), "elected leader from the ELR")
}

package rebalancetimeline

import (
	"bytes"
	"image/png"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

// events is a run as the members tell it: a and b share six partitions, c
// joins at 3 s, b is killed at 6 s and its partitions go to a and c at 12 s.
// Under eager every partition is revoked and handed out again at each
// rebalance; under cooperative only the two that move.
func events(start time.Time, p groups.Protocol) []groups.Event {
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	ev := func(s float64, member, kind string, parts ...int32) groups.Event {
		return groups.Event{At: at(s), Member: member, Kind: kind, Partitions: parts}
	}
	out := []groups.Event{
		ev(0.5, "a", "assigned", 0, 1, 2),
		ev(0.5, "b", "assigned", 3, 4, 5),
	}
	if p == groups.Eager {
		return append(out,
			ev(3.1, "a", "revoked", 0, 1, 2), ev(3.1, "b", "revoked", 3, 4, 5),
			ev(3.12, "a", "assigned", 0, 1), ev(3.12, "b", "assigned", 3, 4), ev(3.12, "c", "assigned", 2, 5),
			ev(12, "a", "revoked", 0, 1), ev(12, "c", "revoked", 2, 5),
			ev(12.02, "a", "assigned", 0, 1, 3), ev(12.02, "c", "assigned", 2, 4, 5),
		)
	}
	return append(out,
		ev(3.1, "a", "revoked", 2), ev(3.1, "b", "revoked", 5),
		ev(3.6, "c", "assigned", 2, 5),
		ev(12, "a", "assigned", 3), ev(12, "c", "assigned", 4),
	)
}

// Every partition's ownerships follow one another without overlap; the
// killed member's end when it died; eager's rebalances end every ownership,
// cooperative's only those that move.
func TestSpansFollowTheEvents(t *testing.T) {
	start := time.Now()
	dead := map[string]time.Time{"b": start.Add(6 * time.Second)}
	end := start.Add(15 * time.Second)
	for _, c := range []struct {
		p     groups.Protocol
		spans int
	}{{groups.Eager, 6 + 6 + 6}, {groups.Cooperative, 6 + 2 + 2}} {
		got := spans(events(start, c.p), start, end, dead)
		require.Len(t, got, c.spans, "%s: %+v", c.p, got)
		last := map[int32]time.Duration{}
		for _, s := range got {
			require.Less(t, s.From, s.To, "%s: %+v", c.p, s)
			require.GreaterOrEqual(t, s.From, last[s.Partition], "%s: partition %d has two owners at once", c.p, s.Partition)
			last[s.Partition] = s.To
			if s.Member == "b" {
				require.LessOrEqual(t, s.To, 6*time.Second, "%s: b owns nothing once killed", c.p)
			}
		}
		for p := range int32(6) {
			require.Equal(t, 15*time.Second, last[p], "%s: partition %d is owned at the end", c.p, p)
		}
	}
}

// A run in which a member lost its partitions is disturbed; one with
// revocations only is not, and neither is a loss after the end.
func TestDisturbedIsALostSession(t *testing.T) {
	start := time.Now()
	end := start.Add(15 * time.Second)
	require.Empty(t, disturbed(events(start, groups.Cooperative), start, end))
	ev := append(events(start, groups.Cooperative),
		groups.Event{At: start.Add(16 * time.Second), Member: "a", Kind: "lost", Partitions: []int32{0, 1}})
	require.Empty(t, disturbed(ev, start, end), "a loss after the end")
	ev = append(ev, groups.Event{At: start.Add(11 * time.Second), Member: "c", Kind: "lost", Partitions: []int32{2, 5}})
	require.Equal(t, "member c lost partitions [2 5] at 11.0s (the group expelled it)", disturbed(ev, start, end))
}

// Each phase counts the partitions that waited for an owner within it:
// cooperative's join stops the two that move and b's death its two; what
// happens after the phase ends (a stopped, its partitions handed to c, as
// when the run's members are stopped) is not the kill's.
func TestPhaseCountsOnlyItsOwnRebalance(t *testing.T) {
	start := time.Now()
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	dead := map[string]time.Time{"b": at(6)}
	ev := append(events(start, groups.Cooperative),
		groups.Event{At: at(16), Member: "a", Kind: "revoked", Partitions: []int32{0, 1, 3}},
		groups.Event{At: at(16.5), Member: "c", Kind: "assigned", Partitions: []int32{0, 1, 3}})
	join := phase(ev, at(3), at(6), nil)
	require.Equal(t, 2, join.Paused)
	require.Equal(t, 500*time.Millisecond, join.Longest)
	kill := phase(ev, at(6), at(15), dead)
	require.Equal(t, 2, kill.Paused)
	require.Equal(t, 6*time.Second, kill.Longest)
	require.Equal(t, 4, phase(ev, at(6), at(17), dead).Paused, "a's partitions moved to c after the end")
}

// The picture of fixture runs is a PNG of a sane size, one panel a run.
func TestWriteChartDrawsAPNG(t *testing.T) {
	start := time.Now()
	dead := map[string]time.Time{"b": start.Add(6 * time.Second)}
	end := start.Add(15 * time.Second)
	var rows []Row
	for _, p := range groups.Protocols {
		rows = append(rows, Row{
			Protocol: p, Join: Phase{Paused: 2, Longest: 500 * time.Millisecond}, Kill: Phase{Paused: 2, Longest: 6 * time.Second},
			Owners: spans(events(start, p), start, end, dead),
			JoinAt: 3 * time.Second, KillAt: 6 * time.Second, End: 15 * time.Second,
		})
	}
	var b bytes.Buffer
	require.NoError(t, WriteChart(&b, rows))
	img, err := png.Decode(&b)
	require.NoError(t, err)
	require.Equal(t, 960, img.Bounds().Dx(), "10 inches at 96 dpi")
	require.Greater(t, img.Bounds().Dy(), 600, "three panels")

	require.Error(t, WriteChart(&b, nil), "no runs, no picture")
}

package dlt_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/10-processing-failures/dlt"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/lectures/10-processing-failures/retrytopics"
)

func TestRunOf(t *testing.T) {
	for key, run := range map[string]string{
		"retry-123456-0007": "retry-123456",
		"retry-0007":        "retry",
		"ord-0000007":       "ord",
		"retry-123456-x":    "",
		"nokey":             "",
		"":                  "",
	} {
		require.Equal(t, run, dlt.RunOf(key), key)
	}
}

// A run whose partner never recovers fills the DLT; once the partner is
// fixed, a replay books each of its retriable dead letters once; a second
// replay writes nothing (the replay group remembers); a replay -again writes
// them all again and the partner books nothing new (the idempotency key).
// The poison letters, passed over by the replay of the retriable ones, are
// still there for a replay of their own selection.
func TestReplayBooksOnceReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	r, addr, err := partner.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	pc := partner.NewClient(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	say := func(s string) { t.Log(s) }

	down, err := retrytopics.Run(ctx, env.Config, retrytopics.Down, pc, say)
	require.NoError(t, err)
	require.Len(t, down.Lost, 18, "the partner booked nothing")
	var db strings.Builder
	down.Print(&db)
	brewtest.MatchesReadme(t, "../README.md", "retry-topics-down", db.String())

	topics := retrytopics.CourierTopics(retrytopics.DefaultDelays)
	in, err := dlt.Inspect(ctx, env.Config, topics.DLT, down.Run)
	require.NoError(t, err)
	require.Len(t, in.Letters, 20)
	require.Len(t, in.Groups, 2)
	require.Equal(t, dlt.Group{Error: "503 partner unavailable, try later", Kind: "retriable", Count: 18},
		dlt.Group{Error: in.Groups[0].Error, Kind: in.Groups[0].Kind, Count: in.Groups[0].Count})
	require.Equal(t, "poison", in.Groups[1].Kind)
	require.Equal(t, 2, in.Groups[1].Count)
	for _, g := range in.Groups {
		require.False(t, g.Newest.Before(g.Oldest))
		require.Equal(t, g.Oldest, g.Example.At, "the example is the oldest")
	}
	var b strings.Builder
	in.Print(&b)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "dlt", b.String())

	replay := func(again bool, kind string) dlt.ReplayResult {
		t.Helper()
		res, err := dlt.RunReplay(ctx, env.Config, dlt.Replay{Topics: topics, Run: down.Run, Kind: kind, Again: again,
			Book: true, Limit: time.Minute}, pc, say)
		require.NoError(t, err)
		var b strings.Builder
		res.Print(&b)
		t.Log("\n" + b.String())
		return res
	}
	output := func(res dlt.ReplayResult) string {
		var b strings.Builder
		res.Print(&b)
		return b.String()
	}
	booked := func(res dlt.ReplayResult) {
		t.Helper()
		require.Len(t, res.OrderIDs, 18)
		require.Empty(t, res.Doubles)
		require.Empty(t, res.Unbooked)
		for _, id := range res.OrderIDs {
			require.Equal(t, 1, res.Times[id], "order %s booked once per the partner's log", id)
		}
	}

	first := replay(false, dlt.KindRetriable)
	require.Equal(t, 18, first.Replayed)
	require.Equal(t, 18, first.New, "each replayed order booked")
	booked(first)
	brewtest.MatchesReadme(t, "../README.md", "dlt-replay", output(first))

	second := replay(false, dlt.KindRetriable)
	require.Equal(t, 0, second.Replayed, "the replay group remembers what it replayed")
	require.Equal(t, 18, second.Before)
	require.Equal(t, 0, second.New)
	booked(second)
	brewtest.MatchesReadme(t, "../README.md", "dlt-replay-second", output(second))

	again := replay(true, dlt.KindRetriable)
	require.Equal(t, 18, again.Replayed, "-again writes them all again")
	require.Equal(t, 0, again.New, "the idempotency key: nothing booked twice")
	require.Len(t, again.Stats.Bookings, 18, "each answered with its first booking")
	booked(again)
	brewtest.MatchesReadme(t, "../README.md", "dlt-replay-again", output(again))

	log, err := pc.Log(ctx)
	require.NoError(t, err)
	require.Len(t, log.Bookings, 18, "18 bookings in all, after three replays")
	require.Empty(t, log.Doubles())

	poison := replay(false, dlt.KindPoison)
	require.Equal(t, 2, poison.Replayed, "the poison letters have their own replay group")
	require.Len(t, poison.Stats.Dead, 2, "still poison: dead-lettered again")
	require.Equal(t, 0, poison.New)
}

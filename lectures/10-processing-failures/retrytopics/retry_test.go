package retrytopics_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/10-processing-failures/courier"
	"github.com/brew-course/kafka/lectures/10-processing-failures/dlt"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/lectures/10-processing-failures/retrytopics"
)

// listen starts a partner of the test's own on a free port.
func listen(t *testing.T) *partner.Client {
	t.Helper()
	r, addr, err := partner.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return partner.NewClient(addr)
}

func run(t *testing.T, env *brewtest.Env, d retrytopics.Demo, pc *partner.Client) retrytopics.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := retrytopics.Run(ctx, env.Config, d, pc, func(s string) { t.Log(s) })
	require.NoError(t, err)
	var b strings.Builder
	res.Print(&b)
	t.Log("\n" + b.String())
	return res
}

// letters reads the run's dead letters back from the DLT.
func letters(t *testing.T, env *brewtest.Env, run string) []dlt.Letter {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ls, _, err := dlt.Read(ctx, env.Config, retrytopics.CourierTopics(retrytopics.DefaultDelays).DLT)
	require.NoError(t, err)
	return dlt.OfRun(ls, run)
}

// originals reads the records the dead letters name as their origin.
func originals(t *testing.T, env *brewtest.Env, ls []dlt.Letter) map[retrytopics.Origin]*kgo.Record {
	t.Helper()
	from, to := map[int32]int64{}, kadm.ListedOffsets{}
	topic := ""
	for _, l := range ls {
		o := l.Origin
		topic = o.Topic
		if f, ok := from[o.Partition]; !ok || o.Offset < f {
			from[o.Partition] = o.Offset
		}
		if to[o.Topic] == nil {
			to[o.Topic] = map[int32]kadm.ListedOffset{}
		}
		if e := to[o.Topic][o.Partition]; o.Offset+1 > e.Offset {
			to[o.Topic][o.Partition] = kadm.ListedOffset{Topic: o.Topic, Partition: o.Partition, Offset: o.Offset + 1}
		}
	}
	got := map[retrytopics.Origin]*kgo.Record{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, brewkit.ReadTo(ctx, env.Config, topic, from, to, time.Minute, func(r *kgo.Record) {
		got[retrytopics.Origin{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}] = r
	}))
	return got
}

// want is what the headers of a kind of dead letter say.
type want struct {
	errPrefix string
	attempts  int
}

// checkHeaders holds every dead letter to its headers: the origin is the
// orders record with the same key and value, the first failure came before
// the dead letter, and error and attempts are as wanted for its kind.
func checkHeaders(t *testing.T, env *brewtest.Env, ls []dlt.Letter, wants map[string]want) {
	t.Helper()
	orig := originals(t, env, ls)
	for _, l := range ls {
		w, ok := wants[l.Kind]
		require.True(t, ok, "dead letter %s of kind %q", l.Key, l.Kind)
		require.True(t, strings.HasPrefix(l.Error, w.errPrefix), "%s: error %q", l.Key, l.Error)
		require.Equal(t, w.attempts, l.Attempts, "%s: attempts", l.Key)
		require.Equal(t, retrytopics.CourierTopics(retrytopics.DefaultDelays).Orders, l.Origin.Topic, l.Key)
		r := orig[l.Origin]
		require.NotNil(t, r, "%s: no record at its origin %s", l.Key, l.Origin)
		require.Equal(t, l.Key, string(r.Key), "the origin %s is the dead letter's record", l.Origin)
		require.Equal(t, string(r.Value), string(l.Value), "the origin %s is the dead letter's record", l.Origin)
		require.False(t, l.FirstFailure.IsZero(), "%s: first failure", l.Key)
		require.False(t, l.FirstFailure.Before(r.Timestamp.Add(-time.Second)), "%s: failed before it was written", l.Key)
		require.False(t, l.FirstFailure.After(l.At), "%s: first failure after the dead letter", l.Key)
	}
}

func keysOf(ls []dlt.Letter) []string {
	var ks []string
	for _, l := range ls {
		ks = append(ks, l.Key)
	}
	slices.Sort(ks)
	return ks
}

func poisonIDs(res retrytopics.Result) []string {
	b := courier.Batch{Run: res.Run, Keys: res.Demo.Keys}
	var ids []string
	for _, i := range res.Demo.PoisonAt() {
		ids = append(ids, b.OrderID(i))
	}
	slices.Sort(ids)
	return ids
}

// Through a partner outage, with bookings that time out after the partner
// took them, every order is booked exactly once per the partner's log and
// none is lost; the poison records, and only they, are in the DLT.
func TestOutageBooksEveryOrderOnce(t *testing.T) {
	t.Parallel()
	env := brewtest.Cluster(t)
	pc := listen(t)
	d := retrytopics.Demo{Orders: 40, Poison: 2, Delays: []time.Duration{500 * time.Millisecond, 2 * time.Second},
		Outage: 400 * time.Millisecond, TimeoutAfterBooking: 0.15, Recover: 1500 * time.Millisecond,
		CallTimeout: 200 * time.Millisecond, Seed: 1, Limit: time.Minute}
	res := run(t, env, d, pc)

	require.Len(t, res.OrderIDs, 38)
	require.Empty(t, res.Lost, "no order lost")
	require.Empty(t, res.Doubles, "no order booked twice")
	for _, id := range res.OrderIDs {
		require.Equal(t, 1, res.Times[id], "order %s: booked once per the partner's log", id)
	}
	require.Positive(t, res.Stats.Stages[0].Retried, "the outage refused first attempts")
	require.Equal(t, 0, res.Stats.Stages[2].Dead, "the last retry met a healthy partner")
	log, err := pc.Log(context.Background())
	require.NoError(t, err)
	require.Positive(t, log.Calls.TimedOut, "some bookings timed out after the partner took them")
	require.Equal(t, log.Calls.TimedOut, log.Calls.Replayed, "each retried: the idempotency key answered with the first booking")

	ls := letters(t, env, res.Run)
	require.Equal(t, poisonIDs(res), keysOf(ls), "the poison records, and only they, are in the DLT")
	checkHeaders(t, env, ls, map[string]want{"poison": {"not an order: ", 1}})
}

// When the partner never recovers, each order passes both retry topics and
// lands in the DLT after its third attempt, with the partner's last answer.
func TestNeverRecoversDeadLettersAfterTheLastRetry(t *testing.T) {
	t.Parallel()
	env := brewtest.Cluster(t)
	pc := listen(t)
	d := retrytopics.Demo{Orders: 12, Poison: 2, Delays: []time.Duration{200 * time.Millisecond, 400 * time.Millisecond},
		ErrorRate: 1, CallTimeout: time.Second, Seed: 1, Limit: time.Minute}
	res := run(t, env, d, pc)

	require.Equal(t, []int{12, 10, 10}, []int{res.Stats.Stages[0].Read, res.Stats.Stages[1].Read, res.Stats.Stages[2].Read})
	require.Equal(t, []int{2, 0, 10}, []int{res.Stats.Stages[0].Dead, res.Stats.Stages[1].Dead, res.Stats.Stages[2].Dead})
	require.Len(t, res.Lost, 10, "nothing booked")
	require.Positive(t, res.Stats.Pauses, "the retry partitions were paused until due")

	ls := letters(t, env, res.Run)
	require.Len(t, ls, 12)
	checkHeaders(t, env, ls, map[string]want{
		"poison":    {"not an order: ", 1},
		"retriable": {"503 partner unavailable, try later", 3},
	})
	// The delays held: no dead letter of a retried order came sooner than
	// both delays after its first failure.
	for _, l := range ls {
		if l.Kind == "retriable" {
			require.GreaterOrEqual(t, l.At.Sub(l.FirstFailure), 600*time.Millisecond, "%s: waited both delays", l.Key)
		}
	}
}

// Without parking, an order's later event is booked while its earlier one
// waits in a retry topic; with parking, never. Both book every order once.
func TestParkingKeepsPerKeyOrder(t *testing.T) {
	t.Parallel()
	d := retrytopics.Demo{Orders: 48, Keys: 8, Delays: []time.Duration{300 * time.Millisecond, 800 * time.Millisecond},
		ErrorRate: 0.3, Recover: 400 * time.Millisecond, CallTimeout: time.Second, Seed: 1, Limit: time.Minute}
	for _, park := range []bool{false, true} {
		name := "without"
		if park {
			name = "with"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := brewtest.Cluster(t)
			d := d
			d.Park = park
			res := run(t, env, d, listen(t))
			require.Empty(t, res.Lost)
			require.Empty(t, res.Doubles)
			require.Len(t, res.Stats.Bookings, 48, "every event booked")
			require.Empty(t, res.Stats.Dead)
			ooo := 0
			for _, n := range res.Stats.OutOfOrder() {
				ooo += n
			}
			t.Logf("parking %v: %d bookings out of order in %d keys; %d parked", park, ooo, len(res.Stats.OutOfOrder()), res.Stats.Stages[0].Parked)
			if park {
				require.Zero(t, ooo, "parking keeps each order's events in order")
				require.Positive(t, res.Stats.Stages[0].Parked)
			} else {
				require.Positive(t, ooo, "a retried event is overtaken by its order's later one")
				require.Zero(t, res.Stats.Stages[0].Parked)
			}
		})
	}
}

func TestRetryTopicsReadme(t *testing.T) {
	t.Parallel()
	env := brewtest.Cluster(t)
	res := run(t, env, retrytopics.Defaults, listen(t))
	var b strings.Builder
	res.Print(&b)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "retry-topics", b.String())
}

func TestRetryTopicsParkReadme(t *testing.T) {
	t.Parallel()
	env := brewtest.Cluster(t)
	d := retrytopics.Defaults
	d.Park = true
	res := run(t, env, d, listen(t))
	var b strings.Builder
	res.Print(&b)
	t.Log("\n" + b.String())
	brewtest.MatchesReadme(t, "../README.md", "retry-topics-park", b.String())
}

package replay_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/03-offsets-retention/replay"
)

// The analytics story: records written before and after a moment T, a group
// that read everything; reset to T re-reads exactly the records at or after T.
func TestResetToDatetimeRereadsExactlyFromThatTime(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "replay", 3)
	group := fmt.Sprintf("brew.test.replay-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adm := env.Admin(t)

	cutoff := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	// kgo counts a record's delivery timeout from its timestamp: these are
	// stamped hours ago, so they get none.
	prod := env.Client(t, kgo.RecordDeliveryTimeout(0))
	var after []string
	for i := range 60 {
		ts := cutoff.Add(time.Duration(i-30) * time.Minute) // half before the cutoff, half at or after it
		v := fmt.Sprintf("event-%02d", i)
		r := &kgo.Record{Topic: topic, Key: []byte(v), Value: []byte(v), Timestamp: ts}
		require.NoError(t, prod.ProduceSync(ctx, r).FirstErr())
		if !ts.Before(cutoff) {
			after = append(after, v)
		}
	}
	// The group has read everything.
	ends, err := adm.ListEndOffsets(ctx, topic)
	require.NoError(t, err)
	_, err = adm.CommitOffsets(ctx, group, ends.Offsets())
	require.NoError(t, err)

	plan, err := replay.Plan(ctx, adm, group, topic, replay.Spec{At: cutoff})
	require.NoError(t, err)
	var reread int64
	for _, m := range plan {
		reread += m.Reread
	}
	require.Equal(t, int64(len(after)), reread, "the plan re-reads the records at or after the cutoff")
	require.NoError(t, replay.Apply(ctx, adm, group, topic, plan))

	cons := env.Client(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic))
	var got []string
	for len(got) < len(after) {
		fs := cons.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "read %d of %d", len(got), len(after))
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	slices.Sort(got)
	require.Equal(t, after, got)
}

func TestShiftIsClampedAndEarliestLatest(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "shift", 1)
	group := fmt.Sprintf("brew.test.shift-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := env.Admin(t)
	prod := env.Client(t)
	for range 10 {
		require.NoError(t, prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("x")}).FirstErr())
	}
	_, err := adm.CommitOffsets(ctx, group, kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: 4, LeaderEpoch: -1}}})
	require.NoError(t, err)
	for _, tc := range []struct {
		spec replay.Spec
		want int64
	}{
		{replay.Spec{Shift: -3}, 1},
		{replay.Spec{Shift: -30}, 0},
		{replay.Spec{Shift: 30}, 10},
		{replay.Spec{Earliest: true}, 0},
		{replay.Spec{Latest: true}, 10},
	} {
		plan, err := replay.Plan(ctx, adm, group, topic, tc.spec)
		require.NoError(t, err)
		require.Equal(t, tc.want, plan[0].New, "%s", tc.spec)
		require.Equal(t, int64(4), plan[0].Current)
		require.Equal(t, 10-tc.want, plan[0].Reread)
	}
	require.Error(t, replay.Spec{Earliest: true, Latest: true}.Validate())
}

func TestActiveGroupIsRefused(t *testing.T) {
	env := brewtest.Cluster(t)
	topic := env.FreshTopic(t, "active", 1)
	group := fmt.Sprintf("brew.test.active-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := env.Admin(t)
	cons := env.Client(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic))
	brewtest.Eventually(t, 30*time.Second, "the consumer joins", func() (bool, string) {
		pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		cons.PollRecords(pctx, 1) // drives the join; the topic is empty
		pcancel()
		gs, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return false, err.Error()
		}
		return len(gs[group].Members) == 1, gs[group].State
	})
	_, err := replay.Plan(ctx, adm, group, topic, replay.Spec{Earliest: true})
	require.True(t, errors.Is(err, replay.ErrActive), "got %v", err)
	require.ErrorContains(t, err, "stop its consumers first")
}

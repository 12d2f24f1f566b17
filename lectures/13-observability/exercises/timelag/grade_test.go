package timelag

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

// The kitchen's topic: partition p holds records[p] orders, the i-th
// stamped (10p + i) minutes after an hour ago; the group has committed
// committed[p] (none on partition 3).
var (
	records   = []int{5, 4, 4, 3}
	committed = map[int32]int64{0: 2, 1: 4, 2: 0}
)

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.RealKafka)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := env.FreshTopic(t, "ex-timelag", int32(len(records)))
	group := topic + ".kitchen"
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	stamp := func(p int32, i int64) time.Time { return base.Add(time.Duration(10*int64(p)+i) * time.Minute) }

	// Orders stamped long ago: kgo counts the delivery timeout from a
	// record's timestamp, so the writer has none.
	cl := env.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(0))
	var recs []*kgo.Record
	for p, n := range records {
		for i := range n {
			recs = append(recs, &kgo.Record{
				Topic: topic, Partition: int32(p), Timestamp: stamp(int32(p), int64(i)),
				Key: fmt.Appendf(nil, "ord-%d-%d", p, i), Value: []byte(`{"type":"OrderPlaced"}`),
			})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("writing the orders: %v", err)
	}
	adm := env.Admin(t)
	offsets := kadm.Offsets{}
	for p, at := range committed {
		offsets.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1})
	}
	if err := adm.CommitAllOffsets(ctx, group, offsets); err != nil {
		t.Fatalf("committing the kitchen's offsets: %v", err)
	}
	t.Cleanup(func() { adm.DeleteGroup(context.Background(), group) }) //nolint:errcheck // best effort

	type answer struct {
		lags map[int32]time.Duration
		err  error
	}
	done := make(chan answer, 1)
	before := time.Now()
	go func() {
		cctx, ccancel := context.WithTimeout(ctx, 40*time.Second)
		defer ccancel()
		lags, err := TimeLag(cctx, env.Config, adm, group, topic)
		done <- answer{lags, err}
	}()
	var got answer
	select {
	case got = <-done:
	case <-time.After(45 * time.Second):
		grade.Fail(t, "a caught-up partition has no record at its committed offset: one that waits for it waits for ever; its time lag is 0 without reading",
			"TimeLag did not return within 45 s, even once its context ended after 40 s")
	}
	after := time.Now()
	if errors.Is(got.err, context.DeadlineExceeded) {
		grade.Fail(t, "a caught-up partition has no record at its committed offset: one that waits for it waits until the context ends; its time lag is 0 without reading",
			"TimeLag returned only when its context ended after 40 s: %v", got.err)
	}
	grade.Failed(t, got.err, "read each lagging partition's record at its committed offset, with a client of your own", "TimeLag")

	for p := range int32(len(records)) {
		d, ok := got.lags[p]
		at, has := committed[p]
		switch {
		case !has && ok:
			grade.Fail(t, "a partition the group has never committed on has no committed offset to measure from: leave it out",
				"TimeLag gave partition %d, on which group %s has no committed offset, %s", p, group, d)
		case !has:
			continue
		case !ok:
			grade.Fail(t, "every partition with a committed offset gets an entry, 0 when nothing waits",
				"TimeLag gave nothing for partition %d (committed %d of %d records)", p, at, records[p])
		case at == int64(records[p]) && d != 0:
			grade.Fail(t, "a group that has processed everything on a partition has nothing waiting there: 0, however old its last record is",
				"partition %d is caught up (committed %d, end %d) and TimeLag says %s", p, at, records[p], d.Round(time.Second))
		case at == int64(records[p]):
			continue
		}
		ts := stamp(p, at)
		lo, hi := before.Sub(ts)-time.Second, after.Sub(ts)+time.Second
		if d < lo || d > hi {
			grade.Fail(t, "the committed offset is the next record to process: its timestamp is when the oldest waiting order was written; now minus that is the time lag",
				"partition %d (committed %d, end %d): TimeLag says %s; the record at offset %d was written %s ago%s",
				p, at, records[p], d.Round(time.Second), at, before.Sub(ts).Round(time.Second), which(p, d, before, stamp))
		}
	}
	if extra := slices.DeleteFunc(slices.Collect(maps.Keys(got.lags)), func(p int32) bool { return p >= 0 && int(p) < len(records) }); len(extra) > 0 {
		grade.Fail(t, "the topic has partitions 0 to 3 only", "TimeLag gave partitions %v, which %s does not have", extra, topic)
	}
}

// which says which record's age d is, when it is one of partition p's.
func which(p int32, d time.Duration, now time.Time, stamp func(int32, int64) time.Time) string {
	for i := range int64(records[p]) {
		if age := now.Sub(stamp(p, i)); d > age-2*time.Second && d < age+2*time.Second {
			return fmt.Sprintf(": that is the age of the record at offset %d", i)
		}
	}
	return ""
}

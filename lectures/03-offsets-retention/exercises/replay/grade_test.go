package replay

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const (
	hint = "the cluster finds the first offset at or after a time itself: ListOffsets with a timestamp in milliseconds since the epoch, " +
		"answering the end offset where no record is that new; then commit those offsets for the group (lecture 03: replaying history)"
	fetchHint = "reading a partition from the start to find a time costs as much as the history is long; " +
		"ListOffsets by timestamp answers from the broker's time index and reads no records (lecture 03: replaying history)"
)

// partition is what the grader writes to one partition: n orders, the i-th
// stamped base + i*every + skew.
type partition struct {
	n            int
	every, skew  time.Duration
	firstAtOrAft int64 // the offset ReplayFrom must commit
}

// fetched counts the records of one topic a client reads.
type fetched struct {
	topic string
	n     atomic.Int64
}

func (f *fetched) OnFetchBatchRead(_ kgo.BrokerMetadata, topic string, _ int32, m kgo.FetchBatchMetrics) {
	if topic == f.topic {
		f.n.Add(int64(m.NumRecords))
	}
}

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	adm := env.Admin(t)

	// Three hours of orders ending an hour ago; the report restarts two
	// hours before that. The topic keeps them a week.
	base := time.Now().Truncate(time.Minute).Add(-4 * time.Hour)
	at := base.Add(time.Hour)
	parts := []partition{
		{n: 400, every: 10 * time.Second, firstAtOrAft: 360},                        // an order at exactly at
		{n: 300, every: 15 * time.Second, skew: 7 * time.Second, firstAtOrAft: 240}, // the first 7 s after
		{n: 200, every: 5 * time.Second, firstAtOrAft: 200},                         // all before at: the end
	}
	name, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{
		Prefix: "brew.test.ex-replay-", Partitions: int32(len(parts)),
		Configs: map[string]string{"retention.ms": fmt.Sprint((7 * 24 * time.Hour).Milliseconds())},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop(context.Background()) }) //nolint:errcheck // best effort
	// Records stamped hours ago: no delivery timeout counted from their stamp.
	prod := env.Client(t, kgo.DefaultProduceTopic(name), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(0))
	var records []*kgo.Record
	order := int64(0)
	for p, part := range parts {
		for i := range part.n {
			order++
			records = append(records, &kgo.Record{
				Partition: int32(p),
				Key:       []byte(brewkit.OrderID(order)),
				Value:     []byte("{}"),
				Timestamp: base.Add(time.Duration(i)*part.every + part.skew),
			})
		}
	}
	if err := prod.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatalf("writing the orders: %v", err)
	}

	// The group has read everything.
	group := fmt.Sprintf("brew.test.ex-analytics-%d", rand.IntN(1e6))
	t.Cleanup(func() { adm.DeleteGroup(context.Background(), group) }) //nolint:errcheck // best effort
	ends, err := brewkit.EndOffsets(ctx, adm, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := commit(ctx, adm, group, ends.Offsets()); err != nil {
		t.Fatalf("committing the group's offsets at the end: %v", err)
	}

	seen := &fetched{topic: name}
	cl := env.Client(t, kgo.WithHooks(seen))
	bounded(t, ctx, 20*time.Second, fetchHint, "ReplayFrom", func(ctx context.Context) { err = ReplayFrom(ctx, cl, group, name, at) })
	grade.Failed(t, err, hint, fmt.Sprintf("ReplayFrom(%s, %s)", group, at.Format(time.TimeOnly)))

	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("reading the group's committed offsets: %v", err)
	}
	for p, part := range parts {
		o, ok := committed.Lookup(name, int32(p))
		got := "nothing"
		if ok {
			got = fmt.Sprint(o.At)
		}
		if !ok || o.At != part.firstAtOrAft {
			want := fmt.Sprintf("offset %d, the first order stamped at or after %s", part.firstAtOrAft, at.Format(time.TimeOnly))
			if part.firstAtOrAft == int64(part.n) {
				want = fmt.Sprintf("its end offset %d: every order there is older than %s", part.n, at.Format(time.TimeOnly))
			}
			grade.Fail(t, hint, "partition %d of %d orders (stamped %s to %s): the group's committed offset is %s; want %s",
				p, part.n, base.Add(part.skew).Format(time.TimeOnly), base.Add(time.Duration(part.n-1)*part.every+part.skew).Format(time.TimeOnly), got, want)
		}
	}
	if n := seen.n.Load(); n > 0 {
		grade.Fail(t, fetchHint, "the offsets are right, but ReplayFrom fetched %d of the topic's %d orders to find them", n, len(records))
	}
}

func commit(ctx context.Context, adm *kadm.Client, group string, offsets kadm.Offsets) error {
	resp, err := adm.CommitOffsets(ctx, group, offsets)
	if err == nil {
		err = resp.Error()
	}
	return err
}

// bounded calls f with a context that ends after limit, and fails the
// grading when f has not returned shortly after: code that ignores its
// context must not hang the grader.
func bounded(t *testing.T, parent context.Context, limit time.Duration, hint, what string, f func(context.Context)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(parent, limit)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(ctx)
	}()
	select {
	case <-done:
	case <-time.After(limit + 2*time.Second):
		grade.Fail(t, hint, "%s did not return within %s", what, limit)
	}
}

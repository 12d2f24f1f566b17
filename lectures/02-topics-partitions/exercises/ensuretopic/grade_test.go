package ensuretopic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const (
	createHint   = "partitions, the replication factor and configs such as retention.ms are given at creation: kadm's CreateTopic takes all three (lecture 02: topic settings at creation)"
	existsHint   = "creating a topic that exists answers TOPIC_ALREADY_EXISTS: for a service that makes sure of its topic that is success, and the topic, its records and settings stay as they are"
	refusedHint  = "kadm's CreateTopics returns an error only when the request fails; each topic's own answer (CreateTopicResponse.Err) says whether the cluster created it"
	orders       = 10
	thirtyDaysMs = 30 * 24 * 60 * 60 * 1000
)

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	adm := env.Admin(t)
	fresh := func() string {
		name := fmt.Sprintf("brew.test.ex-ensure-%d", rand.IntN(1e6))
		t.Cleanup(func() { adm.DeleteTopic(context.Background(), name) }) //nolint:errcheck // best effort
		return name
	}
	ensure := func(topic Topic) (err error) {
		bounded(t, ctx, 15*time.Second, createHint, "EnsureTopic("+topic.Name+")", func(ctx context.Context) { err = EnsureTopic(ctx, adm, topic) })
		return err
	}

	// 1. A topic that does not exist: created with every setting asked for.
	want := Topic{Name: fresh(), Partitions: 6, RF: 3, Retention: 30 * 24 * time.Hour}
	grade.Failed(t, ensure(want), createHint, fmt.Sprintf("EnsureTopic(%s, 6 partitions, RF 3, 30 days), a topic that did not exist", want.Name))
	wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
	err := brewkit.WaitTopics(wctx, adm, want.Name)
	wcancel()
	if err != nil {
		grade.Fail(t, createHint, "EnsureTopic(%s) returned nil, but no such topic was ready on the cluster within 15 s (%v)", want.Name, err)
	}
	settings := func() (int, int, string) {
		td, err := adm.ListTopics(ctx, want.Name)
		if err != nil || td[want.Name].Err != nil {
			t.Fatalf("describing %s: %v %v", want.Name, err, td[want.Name].Err)
		}
		d := td[want.Name]
		rf := 0
		for _, p := range d.Partitions {
			rf = len(p.Replicas)
		}
		rc, err := adm.DescribeTopicConfigs(ctx, want.Name)
		if err != nil {
			t.Fatalf("describing %s's configs: %v", want.Name, err)
		}
		retention := "?"
		if c, err := rc.On(want.Name, nil); err == nil {
			for _, kv := range c.Configs {
				if kv.Key == "retention.ms" {
					retention = kv.MaybeValue()
				}
			}
		}
		return len(d.Partitions), rf, retention
	}
	parts, rf, retention := settings()
	if parts != 6 || rf != 3 {
		grade.Fail(t, createHint, "EnsureTopic created %s with %d partitions on %d replicas; asked for 6 on 3", want.Name, parts, rf)
	}
	if retention != strconv.Itoa(thirtyDaysMs) {
		grade.Fail(t, createHint, "EnsureTopic created %s with retention.ms=%s; asked for 30 days (%d)", want.Name, retention, thirtyDaysMs)
	}

	// 2. The topic exists and holds orders: nothing changes, no error.
	cl := env.Client(t, kgo.DefaultProduceTopic(want.Name))
	var records []*kgo.Record
	for i := range orders {
		records = append(records, &kgo.Record{Key: []byte(brewkit.OrderID(int64(i + 1))), Value: []byte("{}")})
	}
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatalf("writing orders to %s: %v", want.Name, err)
	}
	grade.Failed(t, ensure(want), existsHint, fmt.Sprintf("EnsureTopic(%s) again, on the topic that exists", want.Name))
	if p, r, ret := settings(); p != parts || r != rf || ret != retention {
		grade.Fail(t, existsHint, "the second EnsureTopic(%s) changed the topic: %d partitions, RF %d, retention.ms=%s before; %d, %d, %s after",
			want.Name, parts, rf, retention, p, r, ret)
	}
	kept := int64(0)
	ends, err := brewkit.EndOffsets(ctx, adm, want.Name)
	if err == nil {
		var starts kadm.ListedOffsets
		if starts, err = adm.ListStartOffsets(ctx, want.Name); err == nil {
			ends.Each(func(o kadm.ListedOffset) {
				if s, ok := starts.Lookup(want.Name, o.Partition); ok {
					kept += o.Offset - s.Offset
				}
			})
		}
	}
	if err != nil {
		grade.Fail(t, existsHint, "after the second EnsureTopic(%s) its offsets cannot be listed: %v", want.Name, err)
	}
	if kept != orders {
		grade.Fail(t, existsHint, "%s held %d orders before the second EnsureTopic and %d after", want.Name, orders, kept)
	}

	// 3. A topic the cluster cannot create: 4 replicas on a 3-node cluster.
	bad := Topic{Name: fresh(), Partitions: 3, RF: 4, Retention: 7 * 24 * time.Hour}
	if err := ensure(bad); err == nil {
		td, _ := adm.ListTopics(ctx, bad.Name)
		what := "and the cluster has no such topic"
		if d, ok := td[bad.Name]; ok && d.Err == nil {
			what = fmt.Sprintf("and the topic exists with RF %d", len(d.Partitions[0].Replicas))
		}
		grade.Fail(t, refusedHint, "EnsureTopic(%s, RF 4) on a cluster of 3 brokers returned nil, %s: the cluster's refusal (INVALID_REPLICATION_FACTOR) was lost", bad.Name, what)
	}
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

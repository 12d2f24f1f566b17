package deadletter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/10-processing-failures/courier"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/lectures/10-processing-failures/retrytopics"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	orders := env.FreshTopic(t, "ex-deadletter-orders", 3)
	dlt := env.FreshTopic(t, "ex-deadletter-dlt", 3)

	// Six orders, two of them poison, each with a header of its own.
	var recs []*kgo.Record
	for i := range 6 {
		id := fmt.Sprintf("ord-%04d", i)
		r := (&brewkit.Event{Type: brewkit.OrderPlaced, V: brewkit.EventVersion, OrderID: id, ShopID: "shop-01"}).Record(orders)
		if i%3 == 2 {
			r = courier.PoisonRecord(orders, id)
		}
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: "trace", Value: []byte("t-" + id)})
		recs = append(recs, r)
	}
	cl := env.Client(t)
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("writing the orders: %v", err)
	}
	end, err := brewkit.EndOffsets(ctx, env.Admin(t), orders)
	if err != nil {
		t.Fatal(err)
	}
	var read []*kgo.Record
	if err := brewkit.ReadTo(ctx, env.Config, orders, nil, end, 30*time.Second, func(r *kgo.Record) { read = append(read, r) }); err != nil {
		t.Fatalf("reading the orders: %v", err)
	}

	// Each fails as the courier sees it: poison ones do not decode, the
	// others got the partner's 503.
	first := time.Date(2026, 12, 1, 9, 30, 15, 123_000_000, time.FixedZone("MSK", 3*3600))
	type sent struct {
		orig *kgo.Record
		err  error
	}
	byKey := map[string]sent{}
	var letters []*kgo.Record
	for i, r := range read {
		_, err := courier.Decode(r)
		if err == nil {
			err = &partner.Error{OrderID: string(r.Key), Status: 503, Msg: "partner unavailable, try later"}
		}
		l := DeadLetter(dlt, r, err, 3+i%2, first)
		if l == nil {
			grade.Fail(t, "return the record to write", "DeadLetter returned nil for %s", r.Key)
		}
		if l.Topic != dlt {
			grade.Fail(t, "a letter goes to the dead-letter topic it is given; the record's Topic field is where it came from",
				"the letter for %s goes to topic %q, not the dead-letter topic %q", r.Key, l.Topic, dlt)
		}
		l.Partition = 0 // the producer's partitioner decides; only the contents are graded
		letters = append(letters, l)
		byKey[string(r.Key)] = sent{r, err}
	}
	if err := cl.ProduceSync(ctx, letters...).FirstErr(); err != nil {
		t.Fatalf("writing the letters: %v", err)
	}
	end, err = brewkit.EndOffsets(ctx, env.Admin(t), dlt)
	if err != nil {
		t.Fatal(err)
	}
	var got []*kgo.Record
	if err := brewkit.ReadTo(ctx, env.Config, dlt, nil, end, 30*time.Second, func(r *kgo.Record) { got = append(got, r) }); err != nil {
		t.Fatalf("reading the letters: %v", err)
	}
	if len(got) != len(read) {
		grade.Fail(t, "one letter per failed record", "%d letters in the dead-letter topic for %d failed records", len(got), len(read))
	}
	for _, l := range got {
		s, ok := byKey[string(l.Key)]
		if !ok {
			grade.Fail(t, "a letter keeps the order's key: replay and on-call find the order by it", "a letter with key %q, which no failed order had", l.Key)
		}
		check(t, l, s.orig, s.err)
	}
}

func check(t *testing.T, l, orig *kgo.Record, err error) {
	t.Helper()
	if string(l.Value) != string(orig.Value) {
		grade.Fail(t, "a letter carries the record as it was, so a replay after the fix is the same order",
			"the letter of %s changed the value: %q, was %q", orig.Key, l.Value, orig.Value)
	}
	h := map[string]string{}
	for _, x := range l.Headers {
		h[x.Key] = string(x.Value)
	}
	for _, x := range orig.Headers {
		if h[x.Key] != string(x.Value) {
			grade.Fail(t, "keep the original headers: the event's type and a trace id travel with the order",
				"the letter of %s lost its header %q=%q", orig.Key, x.Key, x.Value)
		}
	}
	kind := "retriable"
	var poison *courier.PoisonError
	if errors.As(err, &poison) {
		kind = "poison"
	}
	want := map[string]string{
		retrytopics.HeaderKind:      kind,
		retrytopics.HeaderTopic:     orig.Topic,
		retrytopics.HeaderPartition: strconv.Itoa(int(orig.Partition)),
		retrytopics.HeaderOffset:    strconv.FormatInt(orig.Offset, 10),
	}
	for k, v := range want {
		if h[k] != v {
			grade.Fail(t, "the original topic, partition and offset say where to find the record, and the kind whether a retry can help",
				"the letter of %s has %s=%q, want %q", orig.Key, k, h[k], v)
		}
	}
	if h[retrytopics.HeaderError] == "" {
		grade.Fail(t, "say why it failed: the error's text", "the letter of %s has no %s header", orig.Key, retrytopics.HeaderError)
	}
	if n, err := strconv.Atoi(h[retrytopics.HeaderAttempts]); err != nil || n < 3 {
		grade.Fail(t, "attempts is how many times it was tried, a number", "the letter of %s has %s=%q", orig.Key, retrytopics.HeaderAttempts, h[retrytopics.HeaderAttempts])
	}
	if h[retrytopics.HeaderFirstFailure] != "2026-12-01T06:30:15.123Z" {
		grade.Fail(t, "first.failure.at is RFC 3339 in UTC with milliseconds: 2006-01-02T15:04:05.000Z07:00 of t.UTC()",
			"the letter of %s has %s=%q, want %q", orig.Key, retrytopics.HeaderFirstFailure, h[retrytopics.HeaderFirstFailure], "2026-12-01T06:30:15.123Z")
	}
}

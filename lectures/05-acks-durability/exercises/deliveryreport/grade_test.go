package deliveryreport

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const (
	orders = 40
	// maxMessageBytes is the grader's topic's max.message.bytes; the large
	// orders are twice that, in random bytes compression cannot shrink.
	maxMessageBytes = 1024

	errHint     = "one record's failure arrives in its own delivery report (the promise's error); the function's error is for not being able to send at all"
	missingHint = "Produce only buffers the record: its report is the error its promise gets, and Flush waits until every promise has run (lecture 05: sent is not acknowledged)"
	sendHint    = "give every record to the client (Produce or ProduceSync), and wait for its report before returning"
	extraHint   = "a report without an error means the cluster acknowledged the record: list only the records whose promise got an error"
)

// large are the orders too large for the topic: a catering order with a photo.
var large = []int{7, 19, 20, 33}

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := env.Admin(t)
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.test.ex-deliveryreport-", Partitions: 6,
		Configs: map[string]string{"max.message.bytes": fmt.Sprint(maxMessageBytes)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop(context.Background()) }) //nolint:errcheck // best effort

	// The large orders go to partition 5 and the others to 0-4: a batch the
	// broker refuses is refused whole, so no small order shares one with a
	// large one.
	cl := env.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("warm-up")}).FirstErr(); err != nil {
		t.Fatalf("writing to %s: %v", topic, err)
	}
	var records []*kgo.Record
	for i := 1; i <= orders; i++ {
		key := brewkit.OrderID(int64(i))
		r := &kgo.Record{Topic: topic, Key: []byte(key), Partition: int32(i % 5),
			Value: []byte(`{"type":"OrderPlaced","order_id":"` + key + `","items":["latte"]}`)}
		if slices.Contains(large, i) {
			r.Partition, r.Value = 5, make([]byte, 2*maxMessageBytes)
			crand.Read(r.Value) //nolint:errcheck // crypto/rand.Read does not fail
		}
		records = append(records, r)
	}

	failed := deliver(ctx, t, cl, records)
	// Whatever Deliver waited for, the grader waits for every record before
	// it reads the topic back.
	if err := cl.Flush(ctx); err != nil {
		t.Fatalf("flushing: %v", err)
	}
	stored := map[string]bool{}
	end, err := brewkit.EndOffsets(ctx, adm, topic)
	if err != nil {
		t.Fatal(err)
	}
	err = brewkit.ReadTo(ctx, env.Config, topic, nil, end, 30*time.Second, func(r *kgo.Record) { stored[string(r.Key)] = true })
	if err != nil {
		t.Fatalf("reading %s back: %v", topic, err)
	}
	var notStored []string
	for _, r := range records {
		if !stored[string(r.Key)] {
			notStored = append(notStored, string(r.Key))
		}
	}
	var unsent []string
	for _, k := range notStored {
		if !slices.Contains(large, keyNumber(k)) {
			unsent = append(unsent, k)
		}
	}
	if len(unsent) > 0 {
		grade.Fail(t, sendHint, "Deliver returned, and %d of the %d orders that fit the topic never reached it (%s)", len(unsent), orders-len(large), keysShort(unsent))
	}
	if len(notStored) != len(large) {
		t.Fatalf("the cluster stored %d of %d orders; the grader expects all but the %d large ones (missing: %v)", orders-len(notStored), orders, len(large), notStored)
	}

	slices.Sort(failed)
	failed = slices.Compact(failed)
	var missed, extra []string
	for _, k := range notStored {
		if !slices.Contains(failed, k) {
			missed = append(missed, k)
		}
	}
	for _, k := range failed {
		if !stored[k] && slices.Contains(notStored, k) {
			continue
		}
		extra = append(extra, k)
	}
	if len(missed) > 0 {
		grade.Fail(t, missingHint, "Deliver reported %s as failed; the cluster refused %d orders (MESSAGE_TOO_LARGE), and %s among them went unreported",
			keys(failed), len(notStored), keys(missed))
	}
	if len(extra) > 0 {
		grade.Fail(t, extraHint, "Deliver reported %s as failed, and the cluster stored %s", keys(failed), keys(extra))
	}
}

// deliver calls Deliver, bounded: a function that never returns still
// fails the grade instead of hanging it.
func deliver(ctx context.Context, t *testing.T, cl *kgo.Client, records []*kgo.Record) []string {
	t.Helper()
	// The context lives on after Deliver returns: records still buffered
	// are not failed by its end.
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(cancel)
	type answer struct {
		failed []string
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		f, err := Deliver(dctx, cl, records)
		done <- answer{f, err}
	}()
	select {
	case a := <-done:
		grade.Failed(t, a.err, errHint, "Deliver returned an error")
		return a.failed
	case <-time.After(35 * time.Second):
		grade.Fail(t, missingHint, "Deliver did not return within 35 s")
		return nil
	}
}

func keys(ks []string) string {
	if len(ks) == 0 {
		return "none"
	}
	return "[" + strings.Join(ks, " ") + "]"
}

// keysShort lists at most five keys.
func keysShort(ks []string) string {
	if len(ks) <= 5 {
		return keys(ks)
	}
	return "[" + strings.Join(ks[:5], " ") + fmt.Sprintf(" and %d more]", len(ks)-5)
}

// keyNumber is n of brewkit.OrderID(n).
func keyNumber(k string) int {
	var n int
	fmt.Sscanf(strings.TrimPrefix(k, "ord-"), "%d", &n) //nolint:errcheck // the grader's own keys
	return n
}

package safeproducer

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"

	"github.com/brew-course/kafka/lectures/05-acks-durability/lab"
)

const (
	// orders is how many orders the crash sends: half while one follower
	// is frozen, half while both are.
	orders = 50

	buildHint = "kgo refuses options that contradict each other: an idempotent producer needs acks=all (lecture 05: idempotence)"
	lossHint  = "an order is safe only once every in-sync replica has it: with acks=1 the leader acknowledges its own copy, and a crash takes it away (lecture 05: losing an acknowledged write)"
	dupHint   = "a retry repeats a write the broker may already have; without idempotence the new leader stores it again (lecture 05: idempotence at work)"
	failHint  = "the producer must keep retrying through a leader change: the controller needs broker.session.timeout.ms (9 s) to notice a crash, so a short delivery timeout or few retries give up on good orders (lecture 05: retries and the delivery timeout)"
	flushHint = "after the crash the new leader takes writes within seconds: a producer that still has not delivered its orders a minute later is waiting for something else"
)

// TestGradeAlone freezes and crashes nodes (its name says so: it holds the
// stand alone). It is the lecture's lost-ack crash (package lostack), run
// with the student's producer, plus one follower that keeps up for the
// first half: what it copied, unacknowledged, the producer will send again.
func TestGradeAlone(t *testing.T) {
	env := grade.Start(t, grade.RealKafka)
	// The student's producer: the cluster's address (and login), then
	// ProducerOptions, over kgo's own defaults.
	prod, err := kgo.NewClient(append(env.Config.Opts(), ProducerOptions()...)...)
	grade.Failed(t, err, buildHint, "building the producer from ProducerOptions")
	t.Cleanup(prod.Close)
	settings := describe(prod)
	nodes := env.NodeControl(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	adm := env.Admin(t)

	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.test.ex-safeproducer-", Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop(context.Background()) }) //nolint:errcheck // best effort
	leader, followers, err := lab.Replicas(ctx, adm, topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	// When the leader dies, the controller elects the first replica in the
	// partition's list that is in sync and alive: followers[0]. It keeps up
	// during the first half; followers[1] is frozen from the start.
	keeper, frozen := followers[0], followers[1]

	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	err = prod.ProduceSync(wctx, &kgo.Record{Topic: topic, Value: []byte("warm-up")}).FirstErr()
	wcancel()
	grade.Failed(t, err, flushHint, "the producer's first write, with every node up")
	// The grader's own writer, for the fence record below; it learns the
	// partition's leader now, while every node answers.
	fence := env.Client(t, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	if err := fence.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("fence warm-up")}).FirstErr(); err != nil {
		t.Fatalf("writing to %s: %v", topic, err)
	}
	if err := waitISR(ctx, adm, topic, 3, time.Minute); err != nil {
		t.Fatalf("%s-0 never had all three replicas in its ISR: %v", topic, err)
	}

	o := &outcome{acked: map[string]bool{}, run: strconv.FormatInt(time.Now().UnixNano()%1e9, 36)}
	t.Logf("node %d leads; freezing node %d (%s)", leader, frozen, settings)
	if err := nodes.PauseNode(ctx, int(frozen)); err != nil {
		t.Fatal(err)
	}
	before := logSize(ctx, adm, leader, topic)
	o.send(ctx, prod, topic, 1, orders/2)
	// The first half reaches the leader and the follower that keeps up.
	brewkit.WaitFor(ctx, 5*time.Second, 50*time.Millisecond, func() bool { //nolint:errcheck // a producer that sent nothing yet is judged below
		l := logSize(ctx, adm, leader, topic)
		return l > before && logSize(ctx, adm, keeper, topic) == l
	})
	t.Logf("first half sent, %d acknowledged; freezing node %d", o.ackedCount(), keeper)
	if err := nodes.PauseNode(ctx, int(keeper)); err != nil {
		t.Fatal(err)
	}
	// A fetch the frozen follower left waiting at the leader would carry the
	// next record to it: a fence record of the grader's uses it up, and
	// after replica.fetch.wait.max.ms (500 ms) none is left waiting.
	if err := fence.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("fence")}).FirstErr(); err != nil {
		t.Fatalf("writing the fence record: %v", err)
	}
	if err := brewkit.Sleep(ctx, 700*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	o.send(ctx, prod, topic, orders/2+1, orders)
	brewkit.WaitFor(ctx, 2*time.Second, 20*time.Millisecond, func() bool { return o.answered() == orders }) //nolint:errcheck // acks=all waits for the frozen followers
	t.Logf("second half sent, %d acknowledged; killing node %d", o.ackedCount(), leader)

	if err := nodes.StopNode(ctx, int(leader), true); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int32{keeper, frozen} {
		if err := nodes.ResumeNode(ctx, int(n)); err != nil {
			t.Fatal(err)
		}
	}
	var now int32
	err = brewkit.WaitFor(ctx, time.Minute, 250*time.Millisecond, func() bool {
		l, _, err := lab.Replicas(ctx, adm, topic, 0)
		now = l
		return err == nil && l >= 0 && l != leader
	})
	if err != nil {
		t.Fatalf("no new leader for %s-0 within a minute: %v", topic, err)
	}
	if now != keeper {
		t.Fatalf("node %d leads %s-0 after the crash; the grader expected node %d, the first in-sync replica", now, topic, keeper)
	}
	t.Logf("node %d leads; starting node %d again", now, leader)
	if err := nodes.StartNode(ctx, int(leader)); err != nil {
		t.Fatal(err)
	}
	if err := waitISR(ctx, adm, topic, 3, 2*time.Minute); err != nil {
		t.Fatalf("%s-0 did not get its full ISR back: %v", topic, err)
	}
	fctx, fcancel := context.WithTimeout(ctx, time.Minute)
	err = prod.Flush(fctx)
	fcancel()
	if err != nil {
		grade.Fail(t, flushHint, "a minute after the new leader took over, the producer (%s) still had %d of %d orders without a delivery report",
			settings, orders-o.answered(), orders)
	}

	recs, err := lab.ReadAll(ctx, env.Config, adm, topic)
	if err != nil {
		t.Fatal(err)
	}
	copies := lab.Copies(recs, o.run)
	o.mu.Lock()
	defer o.mu.Unlock()
	lost, doubled, extra := 0, 0, 0
	for i := 1; i <= orders; i++ {
		v := string(lab.Seq(o.run, i))
		if o.acked[v] && copies[v] == 0 {
			lost++
		}
		if copies[v] > 1 {
			doubled++
			extra += copies[v] - 1
		}
	}
	t.Logf("%d acknowledged, %d failed, %d lost, %d stored more than once", len(o.acked), o.failed, lost, doubled)
	if lost > 0 {
		grade.Fail(t, lossHint, "%d of %d orders were acknowledged and are gone after the leader crashed: the producer (%s) was told they were written while only the leader had them",
			lost, len(o.acked), settings)
	}
	if doubled > 0 {
		grade.Fail(t, dupHint, "%d orders are stored more than once (%d extra copies): the producer (%s) retried writes the new leader already had",
			doubled, extra, settings)
	}
	if o.failed > 0 {
		grade.Fail(t, failHint, "%d of %d orders failed during the crash, the first with %v: the producer (%s) gave up on them",
			o.failed, orders, o.firstErr, settings)
	}
}

// outcome is what the producer's delivery reports said.
type outcome struct {
	run      string // marks this grading's orders
	mu       sync.Mutex
	acked    map[string]bool
	failed   int
	firstErr error
}

// send produces orders from..to, noting each report.
func (o *outcome) send(ctx context.Context, prod *kgo.Client, topic string, from, to int) {
	for i := from; i <= to; i++ {
		prod.Produce(ctx, &kgo.Record{Topic: topic, Value: lab.Seq(o.run, i)}, func(r *kgo.Record, err error) {
			o.mu.Lock()
			defer o.mu.Unlock()
			if err != nil {
				o.failed++
				if o.firstErr == nil {
					o.firstErr = err
				}
				return
			}
			o.acked[string(r.Value)] = true
		})
	}
}

func (o *outcome) ackedCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.acked)
}

func (o *outcome) answered() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.acked) + o.failed
}

// describe says what a producer was built with, for the findings.
func describe(cl *kgo.Client) string {
	acks := "all"
	if a, ok := cl.OptValue(kgo.RequiredAcks).(kgo.Acks); ok {
		switch a {
		case kgo.NoAck():
			acks = "0"
		case kgo.LeaderAck():
			acks = "1"
		}
	}
	idem := "on"
	if off, _ := cl.OptValue(kgo.DisableIdempotentWrite).(bool); off {
		idem = "off"
	}
	s := fmt.Sprintf("acks=%s, idempotence %s", acks, idem)
	if d, _ := cl.OptValue(kgo.RecordDeliveryTimeout).(time.Duration); d > 0 {
		s += fmt.Sprintf(", delivery timeout %s", d)
	}
	return s
}

// logSize is the size of the partition's log on node n, -1 if unknown.
func logSize(ctx context.Context, adm *kadm.Client, n int32, topic string) int64 {
	var set kadm.TopicsSet
	set.Add(topic, 0)
	dirs, err := adm.DescribeBrokerLogDirs(ctx, n, set)
	if err != nil {
		return -1
	}
	p, ok := dirs.LookupPartition(topic, 0)
	if !ok {
		return -1
	}
	return p.Size
}

func waitISR(ctx context.Context, adm *kadm.Client, topic string, n int, limit time.Duration) error {
	return brewkit.WaitFor(ctx, limit, 250*time.Millisecond, func() bool {
		isr, err := lab.ISR(ctx, adm, topic, 0)
		return err == nil && len(isr) == n
	})
}

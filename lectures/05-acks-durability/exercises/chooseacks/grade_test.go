package chooseacks

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/grade"

	"github.com/brew-course/kafka/lectures/05-acks-durability/lab"
)

const (
	clicks = 20
	// clickBound is how soon a click must be acknowledged; payBound is how
	// long the grader watches that a payment is not.
	clickBound = time.Second
	payBound   = 1500 * time.Millisecond

	payHint   = "a payment acknowledged before the followers have it is lost if the leader dies: only acks=all waits for every in-sync replica (lecture 05: what to know)"
	clickHint = "acks=all waits for every in-sync replica, and a hung follower stays in the ISR until the controller fences it (broker.session.timeout.ms, 9 s): a click needs only the leader's answer (lecture 05: what acknowledgements cost)"
	writeHint = "with every node up both producers must write: check the acks settings"
)

// TestGradeAlone freezes a node (its name says so: it holds the stand alone).
func TestGradeAlone(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	nodes := env.NodeControl(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := env.Admin(t)
	topic := env.FreshTopic(t, "ex-chooseacks", 1)
	leader, followers, err := lab.Replicas(ctx, adm, topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(followers) == 0 {
		t.Fatalf("%s-0 has no follower", topic)
	}
	frozen := followers[0]

	payments, clicker := producer(t, env, PaymentAcks()), producer(t, env, ClickAcks())
	for _, p := range []*kgo.Client{payments, clicker} {
		// Each producer learns the partition's leader while every node answers.
		wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
		err := p.ProduceSync(wctx, &kgo.Record{Topic: topic, Value: []byte("warm-up")}).FirstErr()
		wcancel()
		grade.Failed(t, err, writeHint, "a first write with every node up")
	}

	t.Logf("node %d leads %s-0; freezing follower %d", leader, topic, frozen)
	if err := nodes.PauseNode(ctx, int(frozen)); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := nodes.ResumeNode(context.WithoutCancel(ctx), int(frozen)); err != nil {
				t.Errorf("resuming node %d: %v", frozen, err)
			}
		}
	}
	defer resume()

	pay := make(chan error, 1)
	sent := time.Now()
	payments.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(brewkit.OrderID(1)), Value: []byte(`{"type":"PaymentReceived"}`)},
		func(_ *kgo.Record, err error) { pay <- err })

	// took[i] is how long click i waited for its report; zero until it has one.
	var mu sync.Mutex
	took := make([]time.Duration, clicks)
	var failed int
	var firstErr error
	var wg sync.WaitGroup
	for i := range clicks {
		wg.Add(1)
		start := time.Now()
		clicker.Produce(ctx, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, `{"type":"MenuClick","n":%d}`, i+1)}, func(_ *kgo.Record, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			took[i] = time.Since(start)
			if err != nil {
				failed++
				if firstErr == nil {
					firstErr = err
				}
			}
		})
	}
	clicksDone := make(chan struct{})
	go func() { wg.Wait(); close(clicksDone) }()
	select {
	case <-clicksDone:
	case <-time.After(clickBound):
	}
	mu.Lock()
	late := 0
	for _, d := range took {
		if d == 0 || d > clickBound {
			late++
		}
	}
	mu.Unlock()

	var payErr error
	payAnswered := false
	select {
	case payErr = <-pay:
		payAnswered = true
	case <-time.After(time.Until(sent.Add(payBound))):
	}
	payAfter := time.Since(sent)
	resume()

	if payAnswered && payErr == nil {
		grade.Fail(t, payHint, "with follower %d frozen in the ISR, the payment was acknowledged %s: only the leader had it (acks=%s)",
			frozen, after(payAfter), acksName(PaymentAcks()))
	}
	if late > 0 {
		grade.Fail(t, clickHint, "with follower %d frozen in the ISR, %d of %d clicks were not acknowledged within %s (acks=%s)",
			frozen, late, clicks, clickBound, acksName(ClickAcks()))
	}
	if failed > 0 {
		grade.Fail(t, clickHint, "with follower %d frozen, %d clicks failed, the first with %v", frozen, failed, firstErr)
	}
	if !payAnswered {
		// Once the follower is back, the payment is written.
		select {
		case payErr = <-pay:
		case <-time.After(30 * time.Second):
			t.Fatalf("the payment had no report 30 s after node %d resumed", frozen)
		}
	}
	if payErr != nil {
		grade.Fail(t, payHint, "the payment failed: %v", payErr)
	}
}

// producer builds a producer with acks; idempotent when acks=all (kgo's
// default, which needs it), plain otherwise.
func producer(t *testing.T, env *brewtest.Env, acks kgo.Acks) *kgo.Client {
	opts := []kgo.Opt{kgo.RequiredAcks(acks), kgo.ProducerLinger(0)}
	if acks != kgo.AllISRAcks() {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	return env.Client(t, opts...)
}

func acksName(a kgo.Acks) string {
	switch a {
	case kgo.NoAck():
		return "0"
	case kgo.LeaderAck():
		return "1"
	case kgo.AllISRAcks():
		return "all"
	}
	return fmt.Sprint(a)
}

func after(d time.Duration) string {
	if d < time.Millisecond {
		return "at once"
	}
	return "after " + d.Round(time.Millisecond).String()
}

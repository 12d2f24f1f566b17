package poison

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const (
	tickets   = 30
	limit     = 5                // the group's share.delivery.count.limit
	baristas  = 2                // of yours, each with its own share consumer
	serveTime = 45 * time.Second // for every ticket to be done
)

var (
	jamOnce = map[int]bool{4: true, 11: true, 19: true, 26: true} // ErrJammed on their first try
	poisons = map[int]bool{7: true, 23: true}                     // ErrUnknownDrink on every try
)

const (
	hintJam    = "ErrJammed is worth another try: release the ticket (AckRelease) and the group delivers it again; a record you leave unacknowledged is accepted by your next poll (lecture 08: accept, release, reject)"
	hintMade   = "accept (AckAccept) a ticket once brew has made it, and only then (lecture 08: accept, release, reject)"
	hintPoison = "no try makes an unknown drink: reject it (AckReject) on its first delivery; release is for what another try may make (lecture 08: the poison ticket, the delivery limit)"
	hintServe  = "poll until ctx ends and acknowledge every record, so that the group moves on (lecture 08: the acquisition lock, acknowledgements)"
)

// kitchen is the grader's brew: it counts each ticket's tries and drinks.
type kitchen struct {
	mu    sync.Mutex
	tries map[int]int
	made  map[int]int
}

func (k *kitchen) brew(r *kgo.Record) error {
	n := ticketOf(r)
	time.Sleep(5 * time.Millisecond)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.tries[n]++
	switch {
	case poisons[n]:
		return fmt.Errorf("ticket %d: %w", n, ErrUnknownDrink)
	case jamOnce[n] && k.tries[n] == 1:
		return fmt.Errorf("ticket %d: %w", n, ErrJammed)
	}
	k.made[n]++
	return nil
}

// delivered reports whether every ticket was tried at least once.
func (k *kitchen) delivered() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.tries) == tickets
}

// after says how long since start, for people.
func after(start time.Time) string {
	if d := time.Since(start); d >= time.Second {
		return "after " + d.Round(100*time.Millisecond).String()
	}
	return "at once"
}

func ticketOf(r *kgo.Record) int {
	for _, h := range r.Headers {
		if h.Key == "ticket" {
			n, _ := strconv.Atoi(string(h.Value))
			return n
		}
	}
	return 0
}

// dead is one record of the dead-letter topic: why and after how many
// deliveries the broker archived a ticket.
type dead struct {
	reason     string
	deliveries string
}

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.RealKafka)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	topic := env.FreshTopic(t, "ex-poison", 1)
	group := topic
	adm := env.Admin(t)
	dlq, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{
		Prefix: "dlq." + topic + ".", Partitions: 1,
		Configs: map[string]string{"errors.deadletterqueue.group.enable": "true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop(context.Background()) }) //nolint:errcheck // best effort
	cl := env.Client(t)
	setGroupConfigs(t, ctx, cl, group, map[string]string{
		"share.auto.offset.reset":           "earliest",
		"share.delivery.count.limit":        strconv.Itoa(limit),
		"errors.deadletterqueue.topic.name": dlq,
	})

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 8))
	var recs []*kgo.Record
	for n := 1; n <= tickets; n++ {
		r := brewkit.NewOrder(rng, int64(n), time.Now()).Record(topic)
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: "ticket", Value: []byte(strconv.Itoa(n))})
		recs = append(recs, r)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("writing the tickets: %v", err)
	}
	atOffset := map[string]int{} // the dead-letter topic names a ticket by its offset
	for _, r := range recs {
		atOffset[strconv.FormatInt(r.Offset, 10)] = ticketOf(r)
	}

	k := &kitchen{tries: map[int]int{}, made: map[int]int{}}
	bctx, stop := context.WithCancel(ctx)
	defer stop()
	type end struct {
		name string
		err  error
	}
	ends := make(chan end, baristas)
	start := time.Now()
	for i := range baristas {
		c := env.Client(t, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.ShareMaxRecords(4), kgo.ShareMaxRecordsStrict())
		name := fmt.Sprintf("barista-%d", i+1)
		go func() { ends <- end{name, Barista(bctx, c, k.brew)} }()
	}

	// Served once the group has nothing left: every ticket accepted,
	// rejected or archived.
	left := int64(-1)
	deadline := time.After(serveTime)
wait:
	for {
		select {
		case e := <-ends:
			grade.Fail(t, hintServe, "Barista (%s) returned %v %s, before its context ended", e.name, e.err, after(start))
		case <-deadline:
			break wait
		case <-time.After(200 * time.Millisecond):
		}
		if left = lag(ctx, adm, group, topic); left == 0 && k.delivered() {
			break
		}
	}
	stop()
	for range baristas {
		select {
		case e := <-ends:
			if e.err != nil && !errors.Is(e.err, context.Canceled) {
				grade.Fail(t, hintServe, "Barista (%s) returned %v when its context ended: a barista that stops returns nil", e.name, e.err)
			}
		case <-time.After(15 * time.Second):
			grade.Fail(t, hintServe, "a Barista did not return within 15 s after its context ended")
		}
	}

	dead := readDead(t, ctx, env.Config, adm, dlq, atOffset)
	k.mu.Lock()
	defer k.mu.Unlock()
	for n := 1; n <= tickets; n++ {
		tries, made := k.tries[n], k.made[n]
		switch {
		case poisons[n]:
		case tries == 0:
			grade.Fail(t, hintServe, "ticket %d was never delivered to a barista in %s (the group's lag: %d)", n, serveTime, left)
		case made == 0 && jamOnce[n]:
			if d, ok := dead[n]; ok {
				grade.Fail(t, hintJam, "ticket %d jammed on its first try (ErrJammed) and went to the dead-letter topic (%s), never made", n, d.reason)
			}
			grade.Fail(t, hintJam, "ticket %d jammed on its first try (ErrJammed) and was never delivered again: it was acknowledged as done and never made", n)
		case made == 0:
			grade.Fail(t, hintMade, "ticket %d was delivered %d times and never made", n, tries)
		case made > 1:
			grade.Fail(t, hintMade, "ticket %d was made %d times: after it was made, it was delivered again", n, made)
		}
	}
	for n := range poisons {
		tries := k.tries[n]
		d, ok := dead[n]
		switch {
		case tries == 0:
			grade.Fail(t, hintServe, "ticket %d was never delivered to a barista in %s (the group's lag: %d)", n, serveTime, left)
		case !ok:
			grade.Fail(t, hintPoison, "ticket %d (ErrUnknownDrink) was delivered %d time(s) and acknowledged as done: Brew counts it served, and it never reached the dead-letter topic", n, tries)
		case tries > 1:
			grade.Fail(t, hintPoison, "ticket %d (ErrUnknownDrink) was delivered %d times before it reached the dead-letter topic, archived with %q after %s deliveries (the group's delivery limit is %d)", n, tries, d.reason, d.deliveries, limit)
		}
	}
	if left != 0 {
		grade.Fail(t, hintServe, "after %s the group still had %d tickets to deliver", serveTime, left)
	}
}

// readDead reads the dead-letter topic: the tickets the broker archived,
// with why. It gives the poison tickets a few seconds to get there.
func readDead(t *testing.T, ctx context.Context, cfg brewkit.Config, adm *kadm.Client, dlq string, atOffset map[string]int) map[int]dead {
	t.Helper()
	var end kadm.ListedOffsets
	brewkit.WaitFor(ctx, 10*time.Second, 200*time.Millisecond, func() bool { //nolint:errcheck // fewer is what is graded
		var err error
		end, err = brewkit.EndOffsets(ctx, adm, dlq)
		if err != nil {
			return false
		}
		o, _ := end.Lookup(dlq, 0)
		return o.Offset >= int64(len(poisons))
	})
	if end == nil {
		t.Fatalf("reading the end of %s: no answer", dlq)
	}
	out := map[int]dead{}
	err := brewkit.ReadTo(ctx, cfg, dlq, nil, end, 30*time.Second, func(r *kgo.Record) {
		h := map[string]string{}
		for _, kv := range r.Headers {
			h[kv.Key] = string(kv.Value)
		}
		if n, ok := atOffset[h["__dlq.errors.offset"]]; ok {
			out[n] = dead{reason: strings.TrimSuffix(h["__dlq.errors.message"], "."), deliveries: h["__dlq.errors.delivery.count"]}
		}
	})
	if err != nil {
		t.Fatalf("reading the dead-letter topic %s: %v", dlq, err)
	}
	return out
}

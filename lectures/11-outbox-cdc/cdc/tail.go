package cdc

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Arrived is an event a Tail read, and when.
type Arrived struct {
	drill.Got
	Record *kgo.Record
	At     time.Time
}

// Tail is a consumer of one topic from given offsets that keeps the events
// of one run as they arrive: kitchen-service's view, with the time each
// event reached it.
type Tail struct {
	cl     *kgo.Client
	run    string
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	events []Arrived
	first  map[string]time.Time // order id: when its first event arrived
	err    error
}

// StartTail starts consuming topic from from (partition: offset) for the
// events whose Run starts with run.
func StartTail(ctx context.Context, cfg brewkit.Config, topic string, from map[int32]int64, run string) (*Tail, error) {
	offsets := map[int32]kgo.Offset{}
	for p, o := range from {
		offsets[p] = kgo.NewOffset().At(o)
	}
	cl, err := brewkit.NewClient(cfg, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	t := &Tail{cl: cl, run: run, cancel: cancel, done: make(chan struct{}), first: map[string]time.Time{}}
	go t.loop(ctx)
	return t, nil
}

func (t *Tail) loop(ctx context.Context) {
	defer close(t.done)
	var check brewkit.FetchCheck
	for {
		fs := t.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		if err := check.Err(fs); err != nil {
			t.mu.Lock()
			t.err = err
			t.mu.Unlock()
			return
		}
		now := time.Now()
		fs.EachRecord(func(r *kgo.Record) {
			ev, err := brewkit.DecodeEvent(r)
			if err != nil || !strings.HasPrefix(ev.Run, t.run) {
				return
			}
			t.mu.Lock()
			t.events = append(t.events, Arrived{Got: drill.Got{Event: ev, ID: eventID(r), Partition: r.Partition, Offset: r.Offset}, Record: r, At: now})
			if _, ok := t.first[ev.OrderID]; !ok {
				t.first[ev.OrderID] = now
			}
			t.mu.Unlock()
		})
	}
}

// eventID is the event id a record carries: the cdc reader's event-id
// header, or Debezium's id.
func eventID(r *kgo.Record) string {
	if id := drill.EventID(r); id != "" {
		return id
	}
	for _, h := range r.Headers {
		if h.Key == "id" {
			return string(h.Value)
		}
	}
	return ""
}

// Unique is how many orders have an event so far.
func (t *Tail) Unique() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.first)
}

// Wait waits until n orders have an event, at most limit.
func (t *Tail) Wait(ctx context.Context, n int, limit time.Duration) error {
	err := brewkit.WaitFor(ctx, limit, 20*time.Millisecond, func() bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		return len(t.first) >= n || t.err != nil
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return t.err
	}
	if err != nil {
		return fmt.Errorf("%d of %d orders reached the topic within %s", len(t.first), n, limit)
	}
	return nil
}

// Events are the run's events so far, in the order they arrived.
func (t *Tail) Events() []Arrived {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Arrived(nil), t.events...)
}

// FirstAt is when order id's first event arrived (zero: not yet).
func (t *Tail) FirstAt(id string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.first[id]
}

// Close stops the consumer.
func (t *Tail) Close() {
	t.cancel()
	<-t.done
	t.cl.Close()
}

// Gots are the events without their arrival.
func Gots(a []Arrived) []drill.Got {
	out := make([]drill.Got, len(a))
	for i, e := range a {
		out[i] = e.Got
	}
	return out
}

package baristas

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/08-share-groups/queue"
)

// This file is the harness that counts a run's tickets: which barista did
// each, how many times each was done, and the time from the first taken to
// the last done. The Kafka calls are in baristas.go.

// count is one run's tally, kept in its Result.
type count struct {
	res *Result
	say func(string)

	mu          sync.Mutex
	done        map[int]int // ticket: times processed
	first, last time.Time
	allDone     chan struct{} // closed once every ticket is done
}

// newCount counts into res, whose Baristas are named, and says the run's
// setup with say once the first ticket is taken.
func newCount(res *Result, say func(string)) *count {
	return &count{res: res, say: say, done: map[int]int{}, allDone: make(chan struct{})}
}

// took counts ticket r done by barista name.
func (k *count) took(name string, r *kgo.Record) {
	k.mu.Lock()
	defer k.mu.Unlock()
	c := k.res.Config
	n := queue.Ticket(r)
	k.done[n]++
	if k.first.IsZero() {
		k.first = time.Now()
		// Said once the baristas read: a run whose reads fail says
		// only why.
		kind := map[Mode]string{Share: "share group", Group: "consumer group"}[c.Mode]
		k.say(fmt.Sprintf("%d tickets in %s (%d partitions); %d baristas in a %s, %s per ticket",
			c.Tickets, k.res.Topic, c.Partitions, c.Consumers, kind, c.Work))
	}
	k.last = time.Now()
	for i := range k.res.Baristas {
		if k.res.Baristas[i].Name == name {
			k.res.Baristas[i].Tickets++
		}
	}
	if len(k.done) == c.Tickets {
		select {
		case <-k.allDone:
		default:
			close(k.allDone)
		}
	}
}

// waitAllDone waits until every ticket is done; it ends early with ctx's
// cause (the first barista's error), or when the tickets take far longer
// than their work.
func (k *count) waitAllDone(ctx context.Context) error {
	c := k.res.Config
	select {
	case <-k.allDone:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(time.Duration(c.Tickets)*c.Work + 2*time.Minute):
		k.mu.Lock()
		defer k.mu.Unlock()
		return fmt.Errorf("only %d of %d tickets done", len(k.done), c.Tickets)
	}
}

// tally writes the result: tickets done, repeats, elapsed time, throughput.
func (k *count) tally() {
	k.mu.Lock()
	defer k.mu.Unlock()
	r := k.res
	r.Done = len(k.done)
	for _, n := range k.done {
		if n > 1 {
			r.Repeats += n - 1
		}
	}
	r.Elapsed = k.last.Sub(k.first)
	if r.Elapsed > 0 {
		r.PerSecond = float64(r.Done) / r.Elapsed.Seconds()
	}
}

package backpressure

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// fifo is the courier's local queue: the poll loop pushes, the workers pop.
// It has no limit of its own; the bounded loop never pushes past its bound.
type fifo struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []*kgo.Record
	closed bool
	popped chan struct{} // a pop happened (for a loop waiting for room)
}

func newFIFO() *fifo {
	q := &fifo{popped: make(chan struct{}, 1)}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *fifo) push(rs []*kgo.Record) {
	if len(rs) == 0 {
		return
	}
	q.mu.Lock()
	q.items = append(q.items, rs...)
	q.mu.Unlock()
	q.cond.Broadcast()
}

// pop returns the oldest record, waiting for one; false once the queue is
// closed and empty.
func (q *fifo) pop() (*kgo.Record, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 {
		if q.closed {
			return nil, false
		}
		q.cond.Wait()
	}
	r := q.items[0]
	q.items[0] = nil // the record is the worker's now: the queue must not keep it alive
	q.items = q.items[1:]
	select {
	case q.popped <- struct{}{}:
	default:
	}
	return r, true
}

func (q *fifo) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// close makes pop return false once the queue is empty.
func (q *fifo) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// waitPop waits for a pop, at most d.
func (q *fifo) waitPop(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-q.popped:
	case <-t.C:
	case <-ctx.Done():
	}
}

// ReadRSS returns this process's resident set size and its peak (VmRSS and
// VmHWM of /proc/self/status), in bytes: Linux only; 0 elsewhere.
func ReadRSS() (rss, peak int64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(l, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			continue
		}
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	return rss, peak
}

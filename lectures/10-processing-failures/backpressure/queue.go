package backpressure

import (
	"context"
	"os"
	"slices"
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

// marks keeps, per partition, the offsets taken into the queue and not yet
// booked, for the ordered commit: a partition is committed up to its lowest
// unbooked record, whatever order the workers finish in.
type marks struct {
	mu    sync.Mutex
	parts map[string]map[int32]*part
}

type part struct {
	open []int64 // taken, in offset order
	done map[int64]bool
	next kgo.EpochOffset // after the last record taken
	sent int64           // the offset last returned by committable
}

func newMarks() *marks { return &marks{parts: map[string]map[int32]*part{}} }

func (m *marks) take(r *kgo.Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ps := m.parts[r.Topic]
	if ps == nil {
		ps = map[int32]*part{}
		m.parts[r.Topic] = ps
	}
	p := ps[r.Partition]
	if p == nil {
		p = &part{done: map[int64]bool{}, sent: -1}
		ps[r.Partition] = p
	}
	p.open = append(p.open, r.Offset)
	p.next = kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset + 1}
}

func (m *marks) finish(r *kgo.Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.parts[r.Topic][r.Partition]; p != nil {
		p.done[r.Offset] = true
	}
}

// committable returns the offset to commit of each partition (of only, when
// not nil) that moved since the last call: its lowest unbooked offset, or
// the offset after the last record taken when all are booked.
func (m *marks) committable(only map[string][]int32) map[string]map[int32]kgo.EpochOffset {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]map[int32]kgo.EpochOffset{}
	for t, ps := range m.parts {
		for n, p := range ps {
			if only != nil && !slices.Contains(only[t], n) {
				continue
			}
			i := 0
			for i < len(p.open) && p.done[p.open[i]] {
				delete(p.done, p.open[i])
				i++
			}
			p.open = append([]int64(nil), p.open[i:]...)
			at := p.next
			if len(p.open) > 0 {
				at = kgo.EpochOffset{Epoch: -1, Offset: p.open[0]}
			}
			if at.Offset == p.sent {
				continue
			}
			p.sent = at.Offset
			if out[t] == nil {
				out[t] = map[int32]kgo.EpochOffset{}
			}
			out[t][n] = at
		}
	}
	return out
}

func (m *marks) unsend(offs map[string]map[int32]kgo.EpochOffset) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for t, ps := range offs {
		for n := range ps {
			if p := m.parts[t][n]; p != nil {
				p.sent = -1
			}
		}
	}
}

func (m *marks) forget(lost map[string][]int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for t, ps := range lost {
		for _, p := range ps {
			delete(m.parts[t], p)
		}
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

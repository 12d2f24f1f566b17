// The reference solution of exercise 10/orderedcommit.
package orderedcommit

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Tracker keeps, per partition, the offsets started and not yet finished in
// offset order, the finished ones among them, and the offset after the last
// started.
type Tracker struct {
	mu    sync.Mutex
	parts map[string]map[int32]*partition
}

type partition struct {
	open  []int64 // started, in offset order, not yet all finished
	done  map[int64]bool
	next  kgo.EpochOffset // the offset after the last started record
	epoch int32
}

func NewTracker() *Tracker {
	return &Tracker{parts: map[string]map[int32]*partition{}}
}

func (t *Tracker) at(r *kgo.Record) *partition {
	ps := t.parts[r.Topic]
	if ps == nil {
		ps = map[int32]*partition{}
		t.parts[r.Topic] = ps
	}
	p := ps[r.Partition]
	if p == nil {
		p = &partition{done: map[int64]bool{}}
		ps[r.Partition] = p
	}
	return p
}

func (t *Tracker) Started(r *kgo.Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.at(r)
	p.open = append(p.open, r.Offset)
	p.next = kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset + 1}
}

func (t *Tracker) Finished(r *kgo.Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.at(r).done[r.Offset] = true
}

// Committable drops the finished records at the head of each partition's
// open list: the first one left is the lowest unfinished, the offset to
// commit; with none left, the offset after the last started.
func (t *Tracker) Committable() map[string]map[int32]kgo.EpochOffset {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]map[int32]kgo.EpochOffset{}
	for topic, ps := range t.parts {
		out[topic] = map[int32]kgo.EpochOffset{}
		for n, p := range ps {
			i := 0
			for i < len(p.open) && p.done[p.open[i]] {
				delete(p.done, p.open[i])
				i++
			}
			p.open = p.open[i:]
			at := p.next
			if len(p.open) > 0 {
				at = kgo.EpochOffset{Epoch: -1, Offset: p.open[0]}
			}
			out[topic][n] = at
		}
	}
	return out
}

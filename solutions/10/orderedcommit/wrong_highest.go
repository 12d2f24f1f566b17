// A plausible wrong solution of exercise 10/orderedcommit: it commits past
// the highest finished record, as a single-threaded loop may, so a record
// still in a slower worker is covered by the commit and lost in a crash. The
// grader must fail it.
package orderedcommit

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

type Tracker struct {
	mu      sync.Mutex
	highest map[string]map[int32]int64
}

func NewTracker() *Tracker { return &Tracker{highest: map[string]map[int32]int64{}} }

func (t *Tracker) Started(r *kgo.Record) {}

func (t *Tracker) Finished(r *kgo.Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.highest[r.Topic] == nil {
		t.highest[r.Topic] = map[int32]int64{}
	}
	if h, ok := t.highest[r.Topic][r.Partition]; !ok || r.Offset > h {
		t.highest[r.Topic][r.Partition] = r.Offset
	}
}

func (t *Tracker) Committable() map[string]map[int32]kgo.EpochOffset {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]map[int32]kgo.EpochOffset{}
	for topic, ps := range t.highest {
		out[topic] = map[int32]kgo.EpochOffset{}
		for p, h := range ps {
			out[topic][p] = kgo.EpochOffset{Epoch: -1, Offset: h + 1}
		}
	}
	return out
}

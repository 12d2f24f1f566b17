// Package ordered is the ordered commit of a consumer whose workers finish
// records out of order: each partition is committed up to its lowest record
// not finished yet, so a restart re-reads what was in flight and skips
// nothing. Courier-service's workers (package workers) and its bounded queue
// (package backpressure) commit this way.
package ordered

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Marks keeps, per partition, the offsets taken and not yet finished. Its
// methods may be called from several goroutines.
type Marks struct {
	mu    sync.Mutex
	parts map[string]map[int32]*part
}

type part struct {
	open []int64 // taken, in offset order
	done map[int64]bool
	next kgo.EpochOffset // after the last record taken
	sent int64           // the offset last returned by Committable
}

// New returns empty marks.
func New() *Marks { return &Marks{parts: map[string]map[int32]*part{}} }

// Take notes r as handed to a worker; records of a partition are taken in
// offset order, as polled.
func (m *Marks) Take(r *kgo.Record) {
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

// Finish notes r as done.
func (m *Marks) Finish(r *kgo.Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.parts[r.Topic][r.Partition]; p != nil {
		p.done[r.Offset] = true
	}
}

// Committable returns the offset to commit of each partition (of only, when
// not nil) that moved since the last call: its lowest unfinished offset, or
// the offset after the last record taken when all are finished.
func (m *Marks) Committable(only map[string][]int32) map[string]map[int32]kgo.EpochOffset {
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

// Unsend makes the next Committable return offs' partitions again (their
// commit failed).
func (m *Marks) Unsend(offs map[string]map[int32]kgo.EpochOffset) {
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

// Forget drops the marks of partitions taken away by a rebalance.
func (m *Marks) Forget(lost map[string][]int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for t, ps := range lost {
		for _, p := range ps {
			delete(m.parts[t], p)
		}
	}
}

// Commit commits, for each partition (of only, when not nil), the offset
// of its lowest unfinished record, and returns the first error of the
// commit or of a partition in it; what failed is sent again next time.
func Commit(ctx context.Context, cl *kgo.Client, m *Marks, only map[string][]int32) error {
	offs := m.Committable(only)
	if len(offs) == 0 {
		return nil
	}
	var cerr error
	cl.CommitOffsetsSync(ctx, offs, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			cerr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil && cerr == nil {
					cerr = fmt.Errorf("committing %s/%d: %w", t.Topic, p.Partition, err)
				}
			}
		}
	})
	if cerr != nil {
		m.Unsend(offs)
	}
	return cerr
}

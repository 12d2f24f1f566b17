// Package txnlog reads a topic that transactions write to, the way a
// consumer sees it under each isolation level, control records included.
package txnlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Read returns every record of topic from its start: up to the last stable
// offset with committed (read_committed: aborted records filtered out), up to
// the high watermark without (read_uncommitted: everything written). The
// transaction markers are kept (r.Attrs.IsControl()): they take offsets too,
// and they are how a reader knows it has reached the end.
func Read(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, topic string, committed bool) ([]*kgo.Record, error) {
	level := kgo.ReadUncommitted()
	list := adm.ListEndOffsets
	if committed {
		level, list = kgo.ReadCommitted(), adm.ListCommittedOffsets
	}
	ends, err := list(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	var recs []*kgo.Record
	err = brewkit.ReadTo(ctx, cfg, topic, nil, ends, time.Minute, func(r *kgo.Record) { recs = append(recs, r) },
		kgo.FetchIsolationLevel(level), kgo.KeepControlRecords())
	return recs, err
}

// Settle waits, up to limit, until no transaction is open on topic: every
// partition's last stable offset has reached its high watermark. A commit
// returns to the producer once the coordinator has decided; the markers reach
// the partitions a moment later, and until they do, read_committed readers
// stop short of the transaction. Settle returns nil also when limit passes
// (a transaction left open by a crashed producer stays open until its timeout
// aborts it): what is open is then not read. An error that waiting does not
// cure (no permission to the topic) ends it at once.
func Settle(ctx context.Context, adm *kadm.Client, topic string, limit time.Duration) error {
	var refused error // an error that waiting does not cure (authorization)
	err := brewkit.WaitFor(ctx, limit, 50*time.Millisecond, func() bool {
		marks, err := Marks(ctx, adm, topic)
		if err != nil {
			if !kerr.IsRetriable(err) && errors.As(err, new(*kerr.Error)) {
				refused = fmt.Errorf("offsets of %s: %w", topic, err)
				return true
			}
			return false
		}
		for _, m := range marks {
			if m.LSO != m.HW {
				return false
			}
		}
		return true
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if refused != nil {
		return refused
	}
	_ = err // limit passed: read what is decided
	return nil
}

// Mark is where a partition's log stands for readers: the high watermark
// (read_uncommitted reads up to it) and the last stable offset (read_committed
// reads up to it: the first offset of the oldest transaction still open).
type Mark struct{ HW, LSO int64 }

// Marks lists each partition's marks; a partition whose last stable offset
// is not listed has LSO -1.
func Marks(ctx context.Context, adm *kadm.Client, topic string) (map[int32]Mark, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, err
	}
	stable, err := adm.ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = stable.Error()
	}
	if err != nil {
		return nil, err
	}
	marks := map[int32]Mark{}
	ends.Each(func(e kadm.ListedOffset) {
		m := Mark{HW: e.Offset, LSO: -1}
		if s, ok := stable.Lookup(topic, e.Partition); ok {
			m.LSO = s.Offset
		}
		marks[e.Partition] = m
	})
	return marks, nil
}

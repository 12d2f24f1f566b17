package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/window"
)

// ChangelogConfigs are the changelog topic's: compacted, so it keeps the
// latest value of each window (and each partition's state) whatever it
// has been through, and a restore reads one record per key, give or take
// what the cleaner has not compacted yet.
var ChangelogConfigs = map[string]string{
	"cleanup.policy":            "compact",
	"segment.ms":                "60000", // a segment rolls every minute, so the cleaner gets to it
	"min.cleanable.dirty.ratio": "0.1",
	"retention.ms":              "-1",
}

// Records is a batch's changes as changelog records of partition p.
func Records(topic string, p int32, c *Changes) []*kgo.Record {
	var rs []*kgo.Record
	for _, k := range SortedKeys(c.Windows) {
		v, _ := json.Marshal(c.Windows[k])
		rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Key: k.Bytes(), Value: v})
	}
	v, _ := json.Marshal(c.Meta)
	return append(rs, &kgo.Record{Topic: topic, Partition: p, Key: []byte(MetaKey), Value: v})
}

// Restored is what one restore read.
type Restored struct {
	Partitions []int32       `json:"partitions"`
	Records    int           `json:"records"` // changelog records applied
	Took       time.Duration `json:"took"`
}

// Restore brings partitions parts of the local store up to date with the
// changelog: each is read from the offset the store has applied, to the
// changelog's last stable offset (read committed: an aborted batch's
// writes are not state).
func (s *Store) Restore(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, topic string, parts []int32) (Restored, error) {
	start := time.Now()
	res := Restored{Partitions: parts}
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return res, fmt.Errorf("the end of changelog %s: %w", topic, err)
	}
	from := map[int32]int64{}
	to := kadm.ListedOffsets{topic: map[int32]kadm.ListedOffset{}}
	for _, p := range parts {
		_, applied, err := s.Meta(p)
		if err != nil {
			return res, err
		}
		from[p] = applied
		if o, ok := ends.Lookup(topic, p); ok {
			to[topic][p] = o
		}
	}
	metas := map[int32]Partition{}
	for _, p := range parts {
		if metas[p], _, err = s.Meta(p); err != nil {
			return res, err
		}
	}
	b := s.db.NewBatch()
	defer b.Close()
	var applyErr error
	err = brewkit.ReadTo(ctx, cfg, topic, from, to, 2*time.Minute, func(r *kgo.Record) {
		if applyErr != nil || r.Attrs.IsControl() {
			return
		}
		res.Records++
		if string(r.Key) == MetaKey {
			var m Partition
			if applyErr = json.Unmarshal(r.Value, &m); applyErr != nil {
				applyErr = fmt.Errorf("changelog partition %d@%d: %w", r.Partition, r.Offset, applyErr)
			}
			metas[r.Partition] = m
			return
		}
		if r.Value == nil { // a tombstone: the window was deleted
			applyErr = b.Delete(windowKey(r.Partition, r.Key), nil)
			return
		}
		applyErr = b.Set(windowKey(r.Partition, r.Key), r.Value, nil)
	}, kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	if err == nil {
		err = applyErr
	}
	if err != nil {
		return res, fmt.Errorf("restoring from %s: %w", topic, err)
	}
	// The partitions' metas point past what was read, control records included.
	for _, p := range parts {
		o, ok := to[topic][p]
		if !ok {
			continue
		}
		v, _ := json.Marshal(local{metas[p], o.Offset})
		if err := b.Set(metaKey(p), v, nil); err != nil {
			return res, err
		}
	}
	if err := b.Commit(nil); err != nil {
		return res, fmt.Errorf("local store: %w", err)
	}
	res.Took = time.Since(start)
	return res, nil
}

// Materialized reads the whole changelog, as the state it describes: each
// key's latest committed value. The tests compare it with the recount.
func Materialized(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, topic string) (window.Totals, map[int32]Partition, error) {
	t, parts := window.Totals{}, map[int32]Partition{}
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("the end of changelog %s: %w", topic, err)
	}
	var bad error
	err = brewkit.ReadTo(ctx, cfg, topic, nil, ends, 2*time.Minute, func(r *kgo.Record) {
		if bad != nil || r.Attrs.IsControl() {
			return
		}
		if string(r.Key) == MetaKey {
			var m Partition
			bad = json.Unmarshal(r.Value, &m)
			parts[r.Partition] = m
			return
		}
		k, err := window.ParseKey(r.Key)
		if err != nil {
			bad = err
			return
		}
		var rev window.Revenue
		bad = json.Unmarshal(r.Value, &rev)
		t[k] = rev
	}, kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	if err == nil {
		err = bad
	}
	return t, parts, err
}

package brewkit

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ReadTo reads topic's partitions up to the offsets in to (not included),
// from the offsets in from, or from each log start when from is nil, and
// hands each record to fn, in each partition's order; a partition with
// nothing between its two offsets is not read. opts add consumer options (an
// isolation level, control records). It fails on a fetch error it cannot
// retry, and when limit passes before every partition is read to its end.
func ReadTo(ctx context.Context, cfg Config, topic string, from map[int32]int64, to kadm.ListedOffsets, limit time.Duration, fn func(*kgo.Record), opts ...kgo.Opt) error {
	left := map[int32]int64{}
	start := map[int32]kgo.Offset{}
	to.Each(func(o kadm.ListedOffset) {
		at := kgo.NewOffset().AtStart()
		if from != nil {
			f, ok := from[o.Partition]
			if !ok || f >= o.Offset {
				return
			}
			at = kgo.NewOffset().At(f)
		}
		if o.Topic == topic && o.Offset > 0 {
			left[o.Partition], start[o.Partition] = o.Offset, at
		}
	})
	if len(left) == 0 {
		return nil
	}
	cl, err := NewClient(cfg, append([]kgo.Opt{
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start}),
		kgo.KeepRetryableFetchErrors(),
	}, opts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var check FetchCheck
	for len(left) > 0 {
		fs, err := check.Poll(rctx, cl, 0)
		if err := ctx.Err(); err != nil {
			return err
		}
		if rctx.Err() != nil {
			return fmt.Errorf("reading %s: partitions %v not read to their end within %s", topic, slices.Sorted(maps.Keys(left)), limit)
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := left[r.Partition]
			if !ok || r.Offset >= end {
				return
			}
			fn(r)
			if r.Offset+1 >= end {
				delete(left, r.Partition)
			}
		})
	}
	return nil
}

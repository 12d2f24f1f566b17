// A plausible wrong solution of exercise 03/resume: it commits each poll's
// offsets as soon as the records arrive, then processes them, so when
// handle fails the failed record and the rest of the poll are already
// committed, and no run ever processes them: committing what was received,
// not what was processed. The grader must fail it.
package resume

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

func CatchUp(ctx context.Context, cfg brewkit.Config, group, topic string, handle func(*kgo.Record) error) error {
	acl, err := brewkit.NewClient(cfg)
	if err != nil {
		return err
	}
	defer acl.Close()
	adm := kadm.NewClient(acl)
	committed, err := adm.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		err = nil
	}
	if err != nil {
		return err
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return err
	}
	from := map[int32]kgo.Offset{}
	left := map[int32]int64{}
	ends.Each(func(e kadm.ListedOffset) {
		at := int64(0)
		if c, ok := committed.Lookup(topic, e.Partition); ok && c.At >= 0 {
			at = c.At
		}
		if at < e.Offset {
			from[e.Partition], left[e.Partition] = kgo.NewOffset().At(at), e.Offset
		}
	})
	if len(left) == 0 {
		return nil
	}
	cl, err := brewkit.NewClient(cfg, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}))
	if err != nil {
		return err
	}
	defer cl.Close()
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		var received kadm.Offsets
		fs.EachRecord(func(r *kgo.Record) {
			if end, due := left[r.Partition]; due && r.Offset < end {
				received.AddOffset(topic, r.Partition, r.Offset+1, -1)
			}
		})
		if _, err := adm.CommitOffsets(ctx, group, received); err != nil {
			return err
		}
		var herr error
		fs.EachRecord(func(r *kgo.Record) {
			end, due := left[r.Partition]
			if herr != nil || !due || r.Offset >= end {
				return
			}
			if herr = handle(r); herr != nil {
				return
			}
			if r.Offset+1 >= end {
				delete(left, r.Partition)
			}
		})
		if herr != nil {
			return herr
		}
	}
	return nil
}

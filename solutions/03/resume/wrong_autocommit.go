// A plausible wrong solution of exercise 03/resume: a group consumer that
// leaves committing to the client's autocommit. Autocommit commits on its
// own schedule (every 5 s) what earlier polls returned, not what handle
// processed: a short run ends with processed records uncommitted, which the
// next run reads again, and a longer one commits records polled but never
// processed. The grader must fail it.
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
	left := map[int32]int64{}
	ends.Each(func(e kadm.ListedOffset) {
		at := int64(0)
		if c, ok := committed.Lookup(topic, e.Partition); ok && c.At >= 0 {
			at = c.At
		}
		if at < e.Offset {
			left[e.Partition] = e.Offset
		}
	})
	if len(left) == 0 {
		return nil
	}
	cl, err := brewkit.NewClient(cfg, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic))
	if err != nil {
		return err
	}
	defer cl.Close() // leaving the group commits what was polled
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
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

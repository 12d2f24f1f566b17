// The reference solution of exercise 03/resume.
package resume

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// CatchUp reads each partition from the group's committed offset (the log
// start where there is none) to the end offset listed at the start, and
// commits, for the group, the offset after the last record handle
// processed: on success and on failure alike, so the next run begins with
// the record that failed and with nothing processed twice.
func CatchUp(ctx context.Context, cfg brewkit.Config, group, topic string, handle func(*kgo.Record) error) error {
	adm, err := admin(cfg)
	if err != nil {
		return err
	}
	defer adm.Close()
	committed, err := adm.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		err = nil // a group that never committed: nothing to resume from
	}
	if err != nil {
		return fmt.Errorf("committed offsets of %s: %w", group, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return err
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return err
	}
	from := map[int32]kgo.Offset{}
	left := map[int32]int64{} // partition -> its end offset, while records are due
	var failed error
	ends.Each(func(e kadm.ListedOffset) {
		if e.Err != nil {
			failed = e.Err
			return
		}
		at := int64(0)
		if s, ok := starts.Lookup(topic, e.Partition); ok {
			at = s.Offset
		}
		if c, ok := committed.Lookup(topic, e.Partition); ok && c.At >= 0 {
			at = max(at, c.At)
		}
		if at < e.Offset {
			from[e.Partition], left[e.Partition] = kgo.NewOffset().At(at), e.Offset
		}
	})
	if failed != nil {
		return failed
	}
	if len(left) == 0 {
		return nil
	}
	cl, err := brewkit.NewClient(cfg, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}))
	if err != nil {
		return err
	}
	defer cl.Close()

	var processed kadm.Offsets
	commit := func() error {
		if len(processed) == 0 {
			return nil
		}
		resp, err := adm.CommitOffsets(context.WithoutCancel(ctx), group, processed)
		if err == nil {
			err = resp.Error()
		}
		return err
	}
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fs.Err0(); err != nil {
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
			processed.AddOffset(topic, r.Partition, r.Offset+1, -1)
			if r.Offset+1 >= end {
				delete(left, r.Partition)
			}
		})
		if herr != nil {
			if err := commit(); err != nil {
				return fmt.Errorf("%w (and committing what was processed: %v)", herr, err)
			}
			return herr
		}
	}
	return commit()
}

func admin(cfg brewkit.Config) (*kadm.Client, error) {
	cl, err := brewkit.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	return kadm.NewClient(cl), nil
}

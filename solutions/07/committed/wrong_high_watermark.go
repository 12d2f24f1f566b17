// A plausible wrong solution of exercise 07/committed: it reads with
// read_committed, but to the high watermark, as a plain reader of a topic
// does. A read_committed fetch stops at the last stable offset: while a
// transaction is open, the offsets between it and the high watermark are
// never returned, and the reader waits for them until its ctx ends. The
// grader must fail it.
package committed

import (
	"context"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

func Paid(ctx context.Context, cfg brewkit.Config, topic string) ([]string, error) {
	cl, err := brewkit.NewClient(cfg,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic) // the high watermark
	if err != nil {
		return nil, err
	}
	end, _ := ends.Lookup(topic, 0)
	var ids []string
	for next := int64(0); next < end.Offset; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return nil, err
		}
		for _, r := range fs.Records() {
			next = r.Offset + 1
			if r.Attrs.IsControl() {
				continue
			}
			e, err := brewkit.DecodeEvent(r)
			if err != nil {
				return nil, err
			}
			ids = append(ids, e.OrderID)
		}
	}
	return ids, nil
}

// A plausible wrong solution of exercise 07/committed: it reads the topic to
// its high watermark with kgo's default isolation level, read_uncommitted,
// and so returns every payment written: those of aborted transactions, and
// the one of a transaction still open. The grader must fail it.
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
	)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
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
			e, err := brewkit.DecodeEvent(r)
			if err != nil {
				return nil, err
			}
			ids = append(ids, e.OrderID)
		}
	}
	return ids, nil
}

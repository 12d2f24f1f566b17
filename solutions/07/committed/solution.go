// The reference solution of exercise 07/committed: read with read_committed
// up to the last stable offset, which ListOffsets with that isolation level
// returns (kadm's ListCommittedOffsets). The transaction markers are kept, so
// that the reader sees where it is even when the last offsets before the LSO
// are a marker or an aborted transaction's records, which read_committed
// never returns.
package committed

import (
	"context"
	"fmt"

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
	stable, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, topic) // the last stable offset
	if err == nil {
		err = stable.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("the last stable offset of %s: %w", topic, err)
	}
	lso, _ := stable.Lookup(topic, 0)
	var ids []string
	for next := int64(0); next < lso.Offset; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return nil, err
		}
		for _, r := range fs.Records() {
			next = r.Offset + 1
			if r.Attrs.IsControl() || r.Offset >= lso.Offset {
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

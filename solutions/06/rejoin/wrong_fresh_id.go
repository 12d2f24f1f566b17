// A plausible wrong solution of exercise 06/rejoin: a static member whose
// instance id is new at every start (the name plus the start time, as a
// container's random hostname would be). Back from a restart it is another
// member: the group rebalances to make room for it, and the old id keeps its
// partitions, unread, until its session times out. The grader must fail it.
package rejoin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

func Member(ctx context.Context, cfg brewkit.Config, name string, group []kgo.Opt, process func(*kgo.Record)) error {
	cl, err := brewkit.NewClient(cfg, append(slices.Clone(group),
		kgo.InstanceID(fmt.Sprintf("%s-%d", name, time.Now().UnixNano())),
		kgo.AutoCommitMarks(),
	)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		if err := fs.Err0(); err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		fs.EachRecord(func(r *kgo.Record) {
			process(r)
			cl.MarkCommitRecords(r)
		})
	}
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return cl.CommitMarkedOffsets(cctx)
}

// A plausible wrong solution of exercise 06/rejoin: a dynamic member, known to
// the group only by the member id the coordinator hands out at each join.
// Stopped, it leaves the group (LeaveGroup) and the group rebalances; back,
// it joins as a stranger and the group rebalances again. The grader must fail it.
package rejoin

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

func Member(ctx context.Context, cfg brewkit.Config, name string, group []kgo.Opt, process func(*kgo.Record)) error {
	cl, err := brewkit.NewClient(cfg, append(slices.Clone(group),
		kgo.ClientID(name), // a name in the broker's logs, not in the group
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

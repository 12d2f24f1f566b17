// A plausible wrong solution of exercise 06/handover: it autocommits marks
// every CommitEvery and adds an OnPartitionsRevoked that only logs. A
// callback of one's own replaces kgo's default one, which committed: the
// partitions that move are handed over uncommitted, and their new owner
// processes those orders again. The grader must fail it.
package handover

import (
	"context"
	"errors"
	"log"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// CommitEvery is how often the member commits when nothing else makes it.
const CommitEvery = time.Minute

func Member(ctx context.Context, cfg brewkit.Config, group []kgo.Opt, process func(*kgo.Record)) error {
	cl, err := brewkit.NewClient(cfg, append(slices.Clone(group),
		kgo.AutoCommitMarks(),
		kgo.AutoCommitInterval(CommitEvery),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, revoked map[string][]int32) {
			log.Printf("partitions revoked: %v", revoked)
		}),
	)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			cl.AllowRebalance()
			return nil
		}
		if err := fs.Err0(); err != nil && !errors.Is(err, context.Canceled) {
			cl.AllowRebalance()
			return err
		}
		fs.EachRecord(func(r *kgo.Record) {
			process(r)
			cl.MarkCommitRecords(r)
		})
		cl.AllowRebalance()
	}
}

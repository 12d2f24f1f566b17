// The reference solution of exercise 06/handover: mark each order once it is
// processed, let kgo commit the marks every CommitEvery, commit them in
// OnPartitionsRevoked (in a rebalance, and as Close leaves the group), and
// let partitions move only between polls.
package handover

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// CommitEvery is how often the member commits when nothing else makes it.
const CommitEvery = time.Minute

func Member(ctx context.Context, cfg brewkit.Config, group []kgo.Opt, process func(*kgo.Record)) error {
	opts := append(slices.Clone(group),
		kgo.AutoCommitMarks(), // autocommit what is marked processed, not what is polled
		kgo.AutoCommitInterval(CommitEvery),
		// A rebalance waits until AllowRebalance: a partition is never
		// taken away while its orders are being processed.
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, _ map[string][]int32) {
			// The next owner begins at the commit: make it ours.
			cl.CommitMarkedOffsets(ctx) //nolint:errcheck // the next owner re-reads what is not committed
		}),
	)
	cl, err := brewkit.NewClient(cfg, opts...)
	if err != nil {
		return err
	}
	defer cl.Close() // leaves the group, calling OnPartitionsRevoked first
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			cl.AllowRebalance() // Close's leave must not wait for this poll
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

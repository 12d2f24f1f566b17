// A plausible wrong solution of exercise 06/handover: it commits on its own
// timer and on the way out, and nothing on revoke. When a second member
// joins, the partitions that move to it are handed over with commits up to a
// minute old, and the newcomer processes those orders again. The grader must
// fail it.
package handover

import (
	"context"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// CommitEvery is how often the member commits when nothing else makes it.
const CommitEvery = time.Minute

func Member(ctx context.Context, cfg brewkit.Config, group []kgo.Opt, process func(*kgo.Record)) error {
	cl, err := brewkit.NewClient(cfg, append(slices.Clone(group), kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll())...)
	if err != nil {
		return err
	}
	defer cl.Close()
	last := time.Now()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			cl.AllowRebalance()
			break
		}
		fs.EachRecord(func(r *kgo.Record) {
			process(r)
			cl.MarkCommitRecords(r)
		})
		cl.AllowRebalance()
		if time.Since(last) >= CommitEvery {
			cl.CommitMarkedOffsets(ctx) //nolint:errcheck // the next commit covers it
			last = time.Now()
		}
	}
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return cl.CommitMarkedOffsets(cctx)
}

// The reference solution of exercise 06/crashsafe: process a poll's orders,
// then commit them, before the next poll. A kill -9 in the middle of a poll
// repeats only what that poll had processed.
package crashsafe

import (
	"context"
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// MaxPoll is the most orders one poll may return.
const MaxPoll = 10

func Consume(ctx context.Context, cfg brewkit.Config, group []kgo.Opt, process func(*kgo.Record)) error {
	// No autocommit: the loop commits, and only what process has finished.
	cl, err := brewkit.NewClient(cfg, append(slices.Clone(group), kgo.DisableAutoCommit())...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		fs := cl.PollRecords(ctx, MaxPoll)
		if ctx.Err() != nil {
			return nil
		}
		if err := fs.Err0(); err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		fs.EachRecord(process)
		// Every order this poll returned is processed: now, and only
		// now, the group may move past them. A commit refused (in a
		// rebalance) is made good by the next one; until then a crash
		// repeats a little more.
		cl.CommitUncommittedOffsets(ctx) //nolint:errcheck // see above
	}
}

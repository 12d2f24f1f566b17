// A plausible wrong solution of exercise 06/crashsafe: it leaves committing
// to kgo's autocommit, which commits what earlier polls returned every 5 s.
// Nothing is lost, but a kill -9 repeats up to 5 s of processed orders, far
// more than the poll the consumer died in. The grader must fail it.
package crashsafe

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// MaxPoll is the most orders one poll may return.
const MaxPoll = 10

func Consume(ctx context.Context, cfg brewkit.Config, group []kgo.Opt, process func(*kgo.Record)) error {
	cl, err := brewkit.NewClient(cfg, group...) // autocommit: kgo's default
	if err != nil {
		return err
	}
	defer cl.Close()
	for ctx.Err() == nil {
		cl.PollRecords(ctx, MaxPoll).EachRecord(process)
	}
	return nil
}

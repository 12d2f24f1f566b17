// A plausible wrong solution of exercise 08/poison: every ticket that fails
// is released for another try, the poison one too. Kafka stops it at the
// group's delivery limit, but only after it went round five times, each time
// taking a barista. The grader must fail it.
package poison

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

func Barista(ctx context.Context, cl *kgo.Client, brew func(*kgo.Record) error) error {
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		for _, r := range fs.Records() {
			if err := brew(r); err != nil {
				r.Ack(kgo.AckRelease) // let Kafka retry it
				continue
			}
			r.Ack(kgo.AckAccept)
		}
		cl.FlushAcks(ctx) //nolint:errcheck // the next poll sends them anyway
	}
}

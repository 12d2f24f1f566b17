// A plausible wrong solution of exercise 08/handback: tickets are made in the
// background while the barista already polls for more, and each is accepted
// once made. But franz-go's next poll accepts whatever the last poll left
// unacknowledged, so the tickets still being made are accepted at once, and a
// barista that dies loses them. The grader must fail it.
package handback

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

func Barista(ctx context.Context, cl *kgo.Client, brew func(*kgo.Record)) error {
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		go func(rs []*kgo.Record) {
			for _, r := range rs {
				brew(r)
				r.Ack(kgo.AckAccept)
			}
		}(fs.Records())
	}
}

// A plausible wrong solution of exercise 08/handback: the barista claims its
// tickets first, accepting them all and sending the acknowledgements, so that
// no other barista makes them too, and makes them after. A barista that dies
// in between loses every ticket it claimed and had not made: the group counts
// them done. The grader must fail it.
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
		cl.MarkAcks(kgo.AckAccept) // they are mine now
		if err := cl.FlushAcks(ctx); err != nil && ctx.Err() == nil {
			return err
		}
		for _, r := range fs.Records() {
			brew(r)
		}
	}
}

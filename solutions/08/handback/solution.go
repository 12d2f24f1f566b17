// The reference solution of exercise 08/handback.
package handback

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Barista serves tickets from cl, a share-group consumer of the tickets
// topic, making each with brew, until ctx ends; then it returns nil. A
// ticket is accepted only once it is made, so a barista that dies leaves the
// rest unacknowledged, and the broker hands them to another.
func Barista(ctx context.Context, cl *kgo.Client, brew func(*kgo.Record)) error {
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil || errors.Is(fs.Err0(), kgo.ErrClientClosed) {
			return nil
		}
		for _, r := range fs.Records() {
			brew(r)
			r.Ack(kgo.AckAccept)
		}
		if err := cl.FlushAcks(ctx); err != nil && ctx.Err() == nil {
			return err
		}
	}
}

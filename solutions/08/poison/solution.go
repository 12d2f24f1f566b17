// The reference solution of exercise 08/poison.
package poison

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Barista serves tickets from cl, a share-group consumer of the tickets
// topic, making each with brew, until ctx ends; then it returns nil. A ticket
// made is accepted; one that jammed is released, for another delivery; one
// that no try will make is rejected: archived at once, on the group's
// dead-letter topic when it has one.
func Barista(ctx context.Context, cl *kgo.Client, brew func(*kgo.Record) error) error {
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err := fs.Err0(); errors.Is(err, kgo.ErrClientClosed) {
			return nil
		}
		for _, r := range fs.Records() {
			switch err := brew(r); {
			case err == nil:
				r.Ack(kgo.AckAccept)
			case errors.Is(err, ErrUnknownDrink):
				r.Ack(kgo.AckReject)
			default:
				r.Ack(kgo.AckRelease)
			}
		}
		if err := cl.FlushAcks(ctx); err != nil && ctx.Err() == nil {
			return err
		}
	}
}

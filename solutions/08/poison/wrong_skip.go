// A plausible wrong solution of exercise 08/poison: a ticket that fails is
// only logged and skipped, as if leaving it unacknowledged gave it back. It
// does not: franz-go accepts what the last poll left unacknowledged, so the
// jammed tickets are never made and the poison ones count as served. The
// grader must fail it.
package poison

import (
	"context"
	"log"

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
				log.Printf("skipping a ticket: %v", err)
				continue
			}
			r.Ack(kgo.AckAccept)
		}
	}
}

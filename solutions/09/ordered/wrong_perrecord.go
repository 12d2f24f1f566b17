// A plausible wrong solution of exercise 09/ordered: a goroutine per record,
// the most concurrency there is. Two events of one order then run side by
// side, and "ready" may be handled before "paid". The grader must fail it.
package ordered

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

func Consume(ctx context.Context, cl *kgo.Client, handle func(*kgo.Record)) error {
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var wg sync.WaitGroup
		fs.EachRecord(func(r *kgo.Record) {
			wg.Go(func() { handle(r) })
		})
		wg.Wait()
	}
}

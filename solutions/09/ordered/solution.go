// The reference solution of exercise 09/ordered.
package ordered

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Consume reads cl, a consumer of the events topic, calling handle for every
// record, until ctx ends; then it returns nil. Each poll's partitions are
// handled in a goroutine each, a partition's records in order, and the next
// poll waits for all of them: a partition is never handled by two
// goroutines at once.
func Consume(ctx context.Context, cl *kgo.Client, handle func(*kgo.Record)) error {
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var wg sync.WaitGroup
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			wg.Go(func() {
				for _, r := range p.Records {
					handle(r)
				}
			})
		})
		wg.Wait()
	}
}

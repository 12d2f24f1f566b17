// A plausible wrong solution of exercise 09/ordered: a goroutine per
// partition, its records in order, but the loop polls again without waiting
// for them. The next poll brings the same partition's next records, and a
// second goroutine handles them while the first is still at work. The grader
// must fail it.
package ordered

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

func Consume(ctx context.Context, cl *kgo.Client, handle func(*kgo.Record)) error {
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			go func() {
				for _, r := range p.Records {
					handle(r)
				}
			}()
		})
	}
}

// A plausible wrong solution of exercise 05/deliveryreport: it waits for
// every report, but takes the promise being called as the acknowledgement
// and never looks at its error, so a refused order counts as delivered. The
// grader must fail it.
package deliveryreport

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

func Deliver(ctx context.Context, cl *kgo.Client, records []*kgo.Record) (failed []string, err error) {
	var mu sync.Mutex
	delivered := map[string]bool{}
	for _, r := range records {
		cl.Produce(ctx, r, func(r *kgo.Record, _ error) {
			mu.Lock()
			delivered[string(r.Key)] = true
			mu.Unlock()
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range records {
		if !delivered[string(r.Key)] {
			failed = append(failed, string(r.Key))
		}
	}
	return failed, nil
}

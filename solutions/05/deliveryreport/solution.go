// The reference solution of exercise 05/deliveryreport.
package deliveryreport

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Deliver produces records through cl and returns the keys of those whose
// delivery report is an error, once every record has its report: each
// promise notes its record's error, and Flush waits for every promise.
func Deliver(ctx context.Context, cl *kgo.Client, records []*kgo.Record) (failed []string, err error) {
	var mu sync.Mutex
	for _, r := range records {
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				failed = append(failed, string(r.Key))
				mu.Unlock()
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	return failed, nil
}

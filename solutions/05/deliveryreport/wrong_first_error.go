// A plausible wrong solution of exercise 05/deliveryreport: ProduceSync and
// the first error of its results, as if the orders were one write. One
// refused order turns the whole call into an error, and the cashier learns
// neither which orders failed nor that the others went through. The grader
// must fail it.
package deliveryreport

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

func Deliver(ctx context.Context, cl *kgo.Client, records []*kgo.Record) (failed []string, err error) {
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		return nil, err
	}
	return nil, nil
}

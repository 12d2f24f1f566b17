// A plausible wrong solution of exercise 04/minisr: three replicas, and
// min.insync.replicas left to the broker. The course stand's brokers default
// to 2, so it behaves here; on a cluster whose default is Kafka's own (1),
// acks=all would acknowledge a payment on the last copy standing. The grader
// must fail it.
package minisr

import (
	"context"

	"github.com/twmb/franz-go/pkg/kadm"
)

func CreatePayments(ctx context.Context, adm *kadm.Client, topic string) error {
	resp, err := adm.CreateTopic(ctx, 6, 3, nil, topic)
	if err != nil {
		return err
	}
	return resp.Err
}

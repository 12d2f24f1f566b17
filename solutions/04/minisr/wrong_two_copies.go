// A plausible wrong solution of exercise 04/minisr: two copies are "one
// spare", and min.insync.replicas=1 so that one node down never stops
// payments. With two nodes down a partition whose replicas include the one
// node left still has a leader, and it acknowledges acks=all writes alone.
// The grader must fail it.
package minisr

import (
	"context"

	"github.com/twmb/franz-go/pkg/kadm"
)

func CreatePayments(ctx context.Context, adm *kadm.Client, topic string) error {
	one := "1"
	resp, err := adm.CreateTopic(ctx, 6, 2, map[string]*string{"min.insync.replicas": &one}, topic)
	if err != nil {
		return err
	}
	return resp.Err
}

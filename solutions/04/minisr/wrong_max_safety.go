// A plausible wrong solution of exercise 04/minisr: "as safe as possible",
// min.insync.replicas equal to the replication factor. Every acks=all write
// then needs every replica, so one node down (a patch, a restart) stops the
// payments. The grader must fail it.
package minisr

import (
	"context"

	"github.com/twmb/franz-go/pkg/kadm"
)

func CreatePayments(ctx context.Context, adm *kadm.Client, topic string) error {
	three := "3"
	resp, err := adm.CreateTopic(ctx, 6, 3, map[string]*string{"min.insync.replicas": &three}, topic)
	if err != nil {
		return err
	}
	return resp.Err
}

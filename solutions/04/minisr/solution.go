// The reference solution of exercise 04/minisr.
package minisr

import (
	"context"

	"github.com/twmb/franz-go/pkg/kadm"
)

// CreatePayments creates topic, with 6 partitions, for payments written with
// acks=all: three copies of each partition, and min.insync.replicas=2 on the
// topic itself. One node down leaves two in sync, enough; two down leave
// one, and the broker refuses acks=all with NOT_ENOUGH_REPLICAS.
func CreatePayments(ctx context.Context, adm *kadm.Client, topic string) error {
	two := "2"
	resp, err := adm.CreateTopic(ctx, 6, 3, map[string]*string{"min.insync.replicas": &two}, topic)
	if err != nil {
		return err
	}
	return resp.Err
}

// Package minisr is exercise 04/minisr: choose the replication factor and min.insync.replicas for payments.
//
// Graded on: real Kafka.
//
// Brew's payment-service writes every PaymentReceived with acks=all, and the
// business has two rules for its topic: with any one of the three nodes
// down, payments must still be accepted (a node is always being patched
// somewhere); with any two down, they must be refused with
// NOT_ENOUGH_REPLICAS rather than acknowledged on a single copy. The rules
// must hold on any cluster, whatever its brokers' defaults (a managed
// cluster's min.insync.replicas may be Kafka's default, 1). Write
// CreatePayments: create the topic with 6 partitions and the replication
// factor and topic configs that keep both rules. The grader creates a topic
// with your function, reads the replicas the cluster placed and the
// min.insync.replicas it applies, and works out for every node and every
// pair of nodes that could be down which in-sync replicas each partition
// keeps and whether the broker accepts an acks=all write with them.
package minisr

import (
	"context"

	"github.com/twmb/franz-go/pkg/kadm"
)

// CreatePayments creates topic, with 6 partitions, for payments written with
// acks=all: accepted with one node down, refused with two.
func CreatePayments(ctx context.Context, adm *kadm.Client, topic string) error {
	// TODO: create the topic with a replication factor and min.insync.replicas that keep both rules.
	return nil
}

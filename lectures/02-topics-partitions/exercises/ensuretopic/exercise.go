// Package ensuretopic is exercise 02/ensuretopic: create a Brew topic idempotently.
//
// Graded on: any stand.
//
// Every instance of Brew's order-service makes sure at start that its topic
// exists: brew.orders.v1 with 6 partitions on 3 replicas, its records kept
// 30 days. Ten instances start at once on every deploy, so the topic is
// usually there already, created by another instance and holding orders.
// Write EnsureTopic (without brewkit.EnsureTopics, the lecture's answer):
// create the topic with its partitions, replication factor and retention
// when it does not exist; leave a topic that exists as it is and succeed;
// return an error when the cluster refuses to create it for any other
// reason. The grader calls it on a new topic and checks what the cluster
// created, writes orders and calls it again, then asks for a topic the
// cluster cannot honour.
package ensuretopic

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Topic is a topic as a service wants it.
type Topic struct {
	Name       string
	Partitions int32
	RF         int16         // replication factor
	Retention  time.Duration // retention.ms
}

// EnsureTopic creates t unless it exists; an existing topic is left as it is.
func EnsureTopic(ctx context.Context, adm *kadm.Client, t Topic) error {
	// TODO: create the topic with its settings; a topic that exists is no error.
	return nil
}

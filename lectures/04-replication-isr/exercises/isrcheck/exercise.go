// Package isrcheck is exercise 04/isrcheck: find the partitions that lost a replica and those that refuse acks=all.
//
// Graded on: real Kafka.
//
// Brew's on-call engineer gets paged when a node dies and must answer two
// questions at once: which partitions have lost a copy (they still work, but
// one more failure may stop them), and which partitions already refuse the
// order-service's acks=all writes. Write Check: for the given topics, return
// the partitions whose in-sync replicas are fewer than their replicas
// (under-replicated) and, separately, the partitions whose in-sync replicas
// are fewer than their topic's min.insync.replicas (acks=all gets
// NOT_ENOUGH_REPLICAS). The grader creates topics with different replica
// placements and min.insync.replicas, calls Check with every node up, then
// stops one node, waits until the cluster has shrunk the ISRs, and compares
// your two lists with the ISRs the cluster reports and with the partitions
// where its own acks=all write is refused.
package isrcheck

import (
	"context"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Partition names one partition of a topic.
type Partition struct {
	Topic     string
	Partition int32
}

// Report is what Check found; the order of each list does not matter.
type Report struct {
	UnderReplicated []Partition // fewer replicas in sync than the partition has
	UnderMinISR     []Partition // fewer replicas in sync than min.insync.replicas: acks=all refused
}

// Check reads the replication state of topics and reports the partitions
// that lost a replica and those that refuse acks=all writes.
func Check(ctx context.Context, adm *kadm.Client, topics ...string) (Report, error) {
	// TODO: read each partition's replicas and ISR, and each topic's min.insync.replicas.
	return Report{}, nil
}

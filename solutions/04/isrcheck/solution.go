// The reference solution of exercise 04/isrcheck.
package isrcheck

import (
	"context"
	"fmt"
	"strconv"

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
// that lost a replica and those that refuse acks=all writes: fresh metadata
// for the replicas and ISRs, and each topic's effective min.insync.replicas
// (its own, or its brokers' default).
func Check(ctx context.Context, adm *kadm.Client, topics ...string) (Report, error) {
	var r Report
	td, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return r, err
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return r, err
	}
	for _, topic := range topics {
		d, ok := td[topic]
		if !ok || d.Err != nil {
			return r, fmt.Errorf("metadata of %s: %v", topic, d.Err)
		}
		rc, err := rcs.On(topic, nil)
		if err != nil {
			return r, err
		}
		minISR := 1 // Kafka's default, if the cluster did not say
		for _, c := range rc.Configs {
			if c.Key == "min.insync.replicas" {
				if minISR, err = strconv.Atoi(c.MaybeValue()); err != nil {
					return r, fmt.Errorf("min.insync.replicas of %s: %w", topic, err)
				}
			}
		}
		for _, p := range d.Partitions.Sorted() {
			if len(p.ISR) < len(p.Replicas) {
				r.UnderReplicated = append(r.UnderReplicated, Partition{topic, p.Partition})
			}
			// The broker never asks for more in-sync replicas than the
			// partition has.
			if len(p.ISR) < min(minISR, len(p.Replicas)) {
				r.UnderMinISR = append(r.UnderMinISR, Partition{topic, p.Partition})
			}
		}
	}
	return r, nil
}

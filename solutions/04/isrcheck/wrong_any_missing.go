// A plausible wrong solution of exercise 04/isrcheck: every partition that
// lost a replica is reported as refusing acks=all too. But acks=all waits
// only for the ISR, and is refused only when the ISR falls below
// min.insync.replicas: with RF 3 and min ISR 2, one replica out of sync
// still takes the writes. The grader must fail it.
package isrcheck

import (
	"context"
	"fmt"

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

func Check(ctx context.Context, adm *kadm.Client, topics ...string) (Report, error) {
	var r Report
	td, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return r, err
	}
	for _, topic := range topics {
		d, ok := td[topic]
		if !ok || d.Err != nil {
			return r, fmt.Errorf("metadata of %s: %v", topic, d.Err)
		}
		for _, p := range d.Partitions.Sorted() {
			if len(p.ISR) < len(p.Replicas) {
				p := Partition{topic, p.Partition}
				r.UnderReplicated = append(r.UnderReplicated, p)
				r.UnderMinISR = append(r.UnderMinISR, p) // a missing replica: acks=all cannot be met
			}
		}
	}
	return r, nil
}

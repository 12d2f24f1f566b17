// A plausible wrong solution of exercise 04/isrcheck: the ISRs read right,
// but min.insync.replicas taken to be the stand's default (2) for every
// topic, instead of each topic's own. A topic with min.insync.replicas=3 and
// one replica out of sync refuses acks=all, and this misses it. The grader
// must fail it.
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
	const minISR = 2 // the stand's min.insync.replicas
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
				r.UnderReplicated = append(r.UnderReplicated, Partition{topic, p.Partition})
			}
			if len(p.ISR) < minISR {
				r.UnderMinISR = append(r.UnderMinISR, Partition{topic, p.Partition})
			}
		}
	}
	return r, nil
}

package isr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Preferred is a partition's preferred leader: the first of its replicas.
func (p Partition) Preferred() int32 {
	if len(p.Replicas) == 0 {
		return -1
	}
	return p.Replicas[0]
}

// NotPreferred lists the partitions led by a node other than their preferred leader.
func (t Topic) NotPreferred() []Partition {
	var out []Partition
	for _, p := range t.Partitions {
		if p.Leader != p.Preferred() {
			out = append(out, p)
		}
	}
	return out
}

// PrintBalance writes how many partitions each node leads and how many it
// would lead if every partition were led by its preferred replica.
func (t Topic) PrintBalance(w io.Writer) {
	leads, prefers := map[int32]int{}, map[int32]int{}
	var nodes []int32
	for _, p := range t.Partitions {
		leads[p.Leader]++
		prefers[p.Preferred()]++
		for _, r := range p.Replicas {
			if !slices.Contains(nodes, r) {
				nodes = append(nodes, r)
			}
		}
	}
	slices.Sort(nodes)
	tb := brewkit.NewTable(w, "NODE", "LEADS", "PREFERRED LEADER OF")
	for _, n := range nodes {
		tb.Row(n, leads[n], prefers[n])
	}
	tb.Flush()
	fmt.Fprintf(w, "partitions not on their preferred leader: %d of %d\n", len(t.NotPreferred()), len(t.Partitions))
}

// ElectPreferred asks the controller to move the leadership of every
// partition of topic back to its preferred replica, where that replica is in
// sync. Partitions already there answer ELECTION_NOT_NEEDED, which is fine.
func ElectPreferred(ctx context.Context, adm *kadm.Client, topic string, partitions []int32) error {
	res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{topic: setOf(partitions)})
	if err != nil {
		return fmt.Errorf("preferred leader election on %s: %w", topic, err)
	}
	var errs []error
	for _, ps := range res {
		for p, r := range ps {
			if r.Err != nil && !errors.Is(r.Err, kerr.ElectionNotNeeded) {
				errs = append(errs, fmt.Errorf("partition %d: %w", p, r.Err))
			}
		}
	}
	return errors.Join(errs...)
}

func setOf(ps []int32) map[int32]struct{} {
	m := make(map[int32]struct{}, len(ps))
	for _, p := range ps {
		m[p] = struct{}{}
	}
	return m
}

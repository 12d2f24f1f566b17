// Package topics describes topics the way `inspect` prints them: per
// partition the leader, replicas, ISR, offline replicas and the log's start
// and end offsets, and the topic's own (non-default) configs.
package inspect

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Partition is one partition of a topic.
type Partition struct {
	ID       int32   `json:"partition"`
	Leader   int32   `json:"leader"`
	Replicas []int32 `json:"replicas"`
	ISR      []int32 `json:"isr"`
	Offline  []int32 `json:"offline"`
	Start    int64   `json:"log_start_offset"`
	End      int64   `json:"log_end_offset"`
}

// Topic is a described topic.
type Topic struct {
	Name       string            `json:"topic"`
	Partitions []Partition       `json:"partitions"`
	Configs    map[string]string `json:"configs"` // set on the topic itself
}

// Records is how many records the partitions hold now.
func (t Topic) Records() int64 {
	var n int64
	for _, p := range t.Partitions {
		n += p.End - p.Start
	}
	return n
}

// Describe reads names from fresh metadata, their offsets and their configs.
func Describe(ctx context.Context, adm *kadm.Client, names ...string) ([]Topic, error) {
	td, err := adm.ListTopics(kadm.WithAuthorizedOps(ctx), names...)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	starts, err := adm.ListStartOffsets(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("start offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("end offsets: %w", err)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("configs: %w", err)
	}
	var out []Topic
	for _, name := range names {
		d, ok := td[name]
		if !ok || d.Err != nil {
			return nil, fmt.Errorf("topic %s: %v (create the Brew topics with -create)", name, d.Err)
		}
		t := Topic{Name: name, Configs: map[string]string{}}
		for _, p := range d.Partitions.Sorted() {
			part := Partition{
				ID: p.Partition, Leader: p.Leader, Replicas: slices.Clone(p.Replicas),
				ISR: slices.Sorted(slices.Values(p.ISR)), Offline: slices.Sorted(slices.Values(p.OfflineReplicas)),
			}
			if o, ok := starts.Lookup(name, p.Partition); ok {
				part.Start = o.Offset
			}
			if o, ok := ends.Lookup(name, p.Partition); ok {
				part.End = o.Offset
			}
			t.Partitions = append(t.Partitions, part)
		}
		if rc, err := rcs.On(name, nil); err == nil {
			for _, c := range rc.Configs {
				if c.Source == kmsg.ConfigSourceDynamicTopicConfig {
					t.Configs[c.Key] = c.MaybeValue()
				}
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// Print writes the topic as a table with its configs.
func (t Topic) Print(w io.Writer) {
	fmt.Fprintf(w, "%s  partitions=%d  records=%d\n", t.Name, len(t.Partitions), t.Records())
	keys := make([]string, 0, len(t.Configs))
	for k := range t.Configs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %s=%s\n", k, t.Configs[k])
	}
	tb := brewkit.NewTable(w, "PART", "LEADER", "REPLICAS", "ISR", "OFFLINE", "START", "END")
	for _, p := range t.Partitions {
		tb.Row(p.ID, p.Leader, fmt.Sprint(p.Replicas), fmt.Sprint(p.ISR), fmt.Sprint(p.Offline), p.Start, p.End)
	}
	tb.Flush()
}

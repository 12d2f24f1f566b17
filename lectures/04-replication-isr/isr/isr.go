// Package isr reads a topic's replication state — per partition the leader,
// its epoch, the replicas, the in-sync replicas and the offline replicas — and
// compares two readings, for watch-isr and the failover drill.
package isr

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Partition is one partition's replication state.
type Partition struct {
	ID       int32   `json:"partition"`
	Leader   int32   `json:"leader"` // -1: no leader
	Epoch    int32   `json:"leader_epoch"`
	Replicas []int32 `json:"replicas"` // Kafka's order: the first is the preferred leader
	ISR      []int32 `json:"isr"`      // sorted
	Offline  []int32 `json:"offline"`  // sorted
}

// Topic is a topic's replication state at one moment.
type Topic struct {
	Name       string      `json:"topic"`
	MinISR     int         `json:"min_insync_replicas"`
	Partitions []Partition `json:"partitions"`
}

// Snapshot reads topic's state from fresh metadata (not the client's cache)
// and its effective min.insync.replicas.
func Snapshot(ctx context.Context, adm *kadm.Client, topic string) (Topic, error) {
	t, err := Partitions(ctx, adm, topic)
	if err != nil {
		return t, err
	}
	t.MinISR, err = minISR(ctx, adm, topic)
	return t, err
}

// Partitions reads the partitions' state only (MinISR stays 0): one metadata
// request, cheap enough to poll.
func Partitions(ctx context.Context, adm *kadm.Client, topic string) (Topic, error) {
	td, err := adm.ListTopics(kadm.WithAuthorizedOps(ctx), topic)
	if err != nil {
		return Topic{}, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	d, ok := td[topic]
	if !ok || d.Err != nil {
		return Topic{}, fmt.Errorf("metadata of %s: %v (create it with -create)", topic, d.Err)
	}
	t := Topic{Name: topic}
	for _, p := range d.Partitions.Sorted() {
		t.Partitions = append(t.Partitions, Partition{
			ID:       p.Partition,
			Leader:   p.Leader,
			Epoch:    p.LeaderEpoch,
			Replicas: slices.Clone(p.Replicas),
			ISR:      slices.Sorted(slices.Values(p.ISR)),
			Offline:  slices.Sorted(slices.Values(p.OfflineReplicas)),
		})
	}
	return t, nil
}

func minISR(ctx context.Context, adm *kadm.Client, topic string) (int, error) {
	rc, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("configs of %s: %w", topic, err)
	}
	r, err := rc.On(topic, nil)
	if err != nil {
		return 0, fmt.Errorf("configs of %s: %w", topic, err)
	}
	for _, c := range r.Configs {
		if c.Key == "min.insync.replicas" {
			return strconv.Atoi(c.MaybeValue())
		}
	}
	return 1, nil // Kafka's default
}

// UnderReplicated counts partitions whose ISR is smaller than their replica set.
func (t Topic) UnderReplicated() int {
	n := 0
	for _, p := range t.Partitions {
		if len(p.ISR) < len(p.Replicas) {
			n++
		}
	}
	return n
}

// UnderMinISR counts partitions that refuse acks=all writes: ISR below the
// effective min.insync.replicas, which the broker caps at the partition's
// replica count (KIP-966): RF 2 with min ISR 3 takes writes on two replicas.
func (t Topic) UnderMinISR() int {
	n := 0
	for _, p := range t.Partitions {
		if len(p.ISR) < min(t.MinISR, len(p.Replicas)) {
			n++
		}
	}
	return n
}

// FullyReplicated reports whether every partition has a leader and all its replicas in sync.
func (t Topic) FullyReplicated() bool {
	for _, p := range t.Partitions {
		if p.Leader < 0 || len(p.ISR) != len(p.Replicas) {
			return false
		}
	}
	return len(t.Partitions) > 0
}

// LeaderCounts counts partitions led by each node (-1 for leaderless ones).
func (t Topic) LeaderCounts() map[int32]int {
	m := map[int32]int{}
	for _, p := range t.Partitions {
		m[p.Leader]++
	}
	return m
}

// Change is one field of one partition that differs between two readings.
type Change struct {
	Partition int32
	Field     string // leader, epoch, isr, offline
	From, To  string
}

func (c Change) String() string {
	return fmt.Sprintf("p%d %s %s -> %s", c.Partition, c.Field, c.From, c.To)
}

// Changes lists what differs from prev to cur, partition by partition.
func Changes(prev, cur Topic) []Change {
	old := map[int32]Partition{}
	for _, p := range prev.Partitions {
		old[p.ID] = p
	}
	var out []Change
	for _, p := range cur.Partitions {
		o, ok := old[p.ID]
		if !ok {
			continue
		}
		add := func(field, from, to string) {
			if from != to {
				out = append(out, Change{p.ID, field, from, to})
			}
		}
		add("leader", node(o.Leader), node(p.Leader))
		add("epoch", fmt.Sprint(o.Epoch), fmt.Sprint(p.Epoch))
		add("isr", ids(o.ISR), ids(p.ISR))
		add("offline", ids(o.Offline), ids(p.Offline))
	}
	return out
}

func node(n int32) string {
	if n < 0 {
		return "none"
	}
	return strconv.Itoa(int(n))
}

func ids(s []int32) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.Itoa(int(v))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Print writes the state as a table with a summary line; changed maps a
// partition to a note shown in its CHANGED column.
func (t Topic) Print(w io.Writer, changed map[int32]string) {
	fmt.Fprintf(w, "%s  (%d partitions, min.insync.replicas=%d)\n\n", t.Name, len(t.Partitions), t.MinISR)
	tb := brewkit.NewTable(w, "PART", "LEADER", "EPOCH", "REPLICAS", "ISR", "OFFLINE", "CHANGED")
	for _, p := range t.Partitions {
		note := changed[p.ID]
		if note == "" {
			note = "-"
		}
		tb.Row(p.ID, node(p.Leader), p.Epoch, ids(p.Replicas), ids(p.ISR), ids(p.Offline), note)
	}
	tb.Flush()
	fmt.Fprintf(w, "\nunder-replicated: %d of %d   under min ISR (acks=all fails): %d of %d\n",
		t.UnderReplicated(), len(t.Partitions), t.UnderMinISR(), len(t.Partitions))
}

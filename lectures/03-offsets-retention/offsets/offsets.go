// Package offsets reads, per partition, the four numbers of this lecture: the
// log start offset, the log end offset (high watermark), a group's committed
// offset, and the lag between the last two.
package offsets

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

// Partition is one partition as a group sees it.
type Partition struct {
	ID        int32 `json:"partition"`
	Start     int64 `json:"log_start_offset"` // the oldest offset still stored
	End       int64 `json:"log_end_offset"`   // the high watermark: the next offset to be written
	Committed int64 `json:"committed"`        // -1: the group has committed nothing here
	Lag       int64 `json:"lag"`              // End - Committed; -1 when nothing is committed
}

// Read returns topic's partitions with group's committed offsets. The lag is
// computed as Kafka's kafka-consumer-groups tool does: log end minus committed.
func Read(ctx context.Context, adm *kadm.Client, group, topic string) ([]Partition, error) {
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("start offsets of %s: %w", topic, err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		committed, err = nil, nil // a group that never committed (kfake says so; Kafka answers empty)
	}
	if err != nil {
		return nil, fmt.Errorf("committed offsets of %s: %w", group, err)
	}
	var out []Partition
	ends.Each(func(e kadm.ListedOffset) {
		if e.Topic != topic {
			return
		}
		p := Partition{ID: e.Partition, End: e.Offset, Committed: -1, Lag: -1}
		if s, ok := starts.Lookup(topic, e.Partition); ok {
			p.Start = s.Offset
		}
		if c, ok := committed.Lookup(topic, e.Partition); ok && c.At >= 0 {
			p.Committed = c.At
			p.Lag = p.End - c.At
		}
		out = append(out, p)
	})
	slices.SortFunc(out, func(a, b Partition) int { return int(a.ID - b.ID) })
	return out, nil
}

// LagLine sums the lag the way Kafka's kafka-consumer-groups shows it:
// log end minus committed, over the partitions the group has committed on.
// A partition without a commit has no lag yet ("-" in the table), so records
// waiting there are not a lag of 0: the line says "no commits yet".
func LagLine(ps []Partition) string {
	var lag int64
	var without int
	for _, p := range ps {
		if p.Committed < 0 {
			without++
			continue
		}
		lag += p.Lag
	}
	switch {
	case without == len(ps):
		return "no commits yet"
	case without > 0:
		return fmt.Sprintf("total lag %d (%d of %d partitions without a commit yet)", lag, without, len(ps))
	}
	return fmt.Sprintf("total lag %d", lag)
}

// Print writes the partitions as a table.
func Print(w io.Writer, ps []Partition) {
	t := brewkit.NewTable(w, "PART", "LOG-START", "LOG-END", "COMMITTED", "LAG")
	for _, p := range ps {
		committed, lag := "-", "-"
		if p.Committed >= 0 {
			committed, lag = fmt.Sprint(p.Committed), fmt.Sprint(p.Lag)
		}
		t.Row(p.ID, p.Start, p.End, committed, lag)
	}
	t.Flush()
}

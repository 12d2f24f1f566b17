// Package replay moves a consumer group's committed offsets — to a point in
// time, to the earliest or latest offsets, or by a shift — the way Kafka's
// kafka-consumer-groups --reset-offsets does: first a plan, then, when asked,
// the commit. A group with active members is left alone.
package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/03-offsets-retention/offsets"
)

// Spec says where to move the offsets; exactly one field is set.
type Spec struct {
	Earliest bool
	Latest   bool
	At       time.Time // the first record at or after this time
	Shift    int64     // relative to the committed offset; negative re-reads
}

func (s Spec) String() string {
	switch {
	case s.Earliest:
		return "the earliest offsets"
	case s.Latest:
		return "the latest offsets"
	case !s.At.IsZero():
		return "the first records at or after " + s.At.Format(time.RFC3339)
	}
	return fmt.Sprintf("a shift of %+d", s.Shift)
}

// Validate checks that exactly one target is set.
func (s Spec) Validate() error {
	n := 0
	for _, set := range []bool{s.Earliest, s.Latest, !s.At.IsZero(), s.Shift != 0} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New("name exactly one target: -to-earliest, -to-latest, -to-datetime or -shift-by")
	}
	return nil
}

// Move is one partition's part of the plan.
type Move struct {
	Partition int32 `json:"partition"`
	Current   int64 `json:"current"` // -1: nothing committed
	New       int64 `json:"new"`
	End       int64 `json:"log_end_offset"`
	Reread    int64 `json:"to_reread"` // records from New to the log end
}

// ErrActive means the group has members; its offsets are not touched.
var ErrActive = errors.New("group has active members")

// Plan computes the new offsets without changing anything. It refuses a group
// with active members: their next commit would overwrite the reset.
func Plan(ctx context.Context, adm *kadm.Client, group, topic string, spec Spec) ([]Move, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := exists(ctx, adm, topic); err != nil {
		return nil, err
	}
	if err := inactive(ctx, adm, group); err != nil {
		return nil, err
	}
	ps, err := offsets.Read(ctx, adm, group, topic)
	if err != nil {
		return nil, err
	}
	var at kadm.ListedOffsets
	if !spec.At.IsZero() {
		if at, err = adm.ListOffsetsAfterMilli(ctx, spec.At.UnixMilli(), topic); err != nil {
			return nil, fmt.Errorf("offsets at %s: %w", spec.At.Format(time.RFC3339), err)
		}
	}
	var plan []Move
	for _, p := range ps {
		m := Move{Partition: p.ID, Current: p.Committed, End: p.End}
		switch {
		case spec.Earliest:
			m.New = p.Start
		case spec.Latest:
			m.New = p.End
		case !spec.At.IsZero():
			m.New = p.End // no record at or after the time: nothing to re-read
			if o, ok := at.Lookup(topic, p.ID); ok && o.Offset >= 0 {
				m.New = o.Offset
			}
		default:
			base := p.Committed
			if base < 0 {
				base = p.End
			}
			m.New = min(max(base+spec.Shift, p.Start), p.End) // clamped like Kafka's tool
		}
		m.Reread = m.End - m.New
		plan = append(plan, m)
	}
	return plan, nil
}

// Apply commits the plan's new offsets for the group, checking again that no
// member joined since the plan was made.
func Apply(ctx context.Context, adm *kadm.Client, group, topic string, plan []Move) error {
	if err := inactive(ctx, adm, group); err != nil {
		return err
	}
	commit := kadm.Offsets{}
	for _, m := range plan {
		commit.Add(kadm.Offset{Topic: topic, Partition: m.Partition, At: m.New, LeaderEpoch: -1})
	}
	resp, err := adm.CommitOffsets(ctx, group, commit)
	if err != nil {
		return fmt.Errorf("committing new offsets for %s: %w", group, err)
	}
	return resp.Error()
}

// NoTopicError means the topic to move the group on does not exist: a plan
// for it would be empty, not a reset.
type NoTopicError struct {
	Topic    string
	Existing []string // the cluster's topics, sorted, internal ones left out
}

func (e *NoTopicError) Error() string {
	const most = 8
	have := "no topics"
	switch n := len(e.Existing); {
	case n > most:
		have = strings.Join(e.Existing[:most], ", ") + fmt.Sprintf(" and %d more", n-most)
	case n > 0:
		have = strings.Join(e.Existing, ", ")
	}
	return fmt.Sprintf("topic %s does not exist (the cluster has %s)", e.Topic, have)
}

// exists returns a *NoTopicError unless topic exists. It asks for the topic
// by name first: a list of all topics leaves out the ones the client may not
// see, where a request for one names the missing permission.
func exists(ctx context.Context, adm *kadm.Client, topic string) error {
	tds, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("describing topic %s: %w", topic, err)
	}
	if tds.Has(topic) {
		return nil
	}
	if tds, err = adm.ListTopics(ctx); err != nil {
		return fmt.Errorf("listing topics: %w", err)
	}
	return &NoTopicError{Topic: topic, Existing: tds.Names()}
}

func inactive(ctx context.Context, adm *kadm.Client, group string) error {
	groups, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return fmt.Errorf("describing group %s: %w", group, err)
	}
	g, ok := groups[group]
	if !ok {
		return nil
	}
	if n := len(g.Members); n > 0 {
		return fmt.Errorf("%w: %s has %d member(s) (state %s); stop its consumers first, then reset", ErrActive, group, n, g.State)
	}
	return nil
}

// Print writes the plan the way kafka-consumer-groups --reset-offsets does.
func Print(w io.Writer, group, topic string, plan []Move) {
	plan = slices.Clone(plan)
	t := brewkit.NewTable(w, "GROUP", "TOPIC", "PARTITION", "CURRENT", "NEW", "LOG-END", "TO RE-READ")
	var total int64
	for _, m := range plan {
		cur := "-"
		if m.Current >= 0 {
			cur = fmt.Sprint(m.Current)
		}
		t.Row(group, topic, m.Partition, cur, m.New, m.End, m.Reread)
		total += m.Reread
	}
	t.Flush()
	fmt.Fprintf(w, "records to re-read: %d\n", total)
}

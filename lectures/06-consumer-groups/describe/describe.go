// Package describe reads a consumer group the way Kafka's
// kafka-consumer-groups --describe does: its protocol and state, and per
// partition the member that owns it, the committed offset, the log end and
// the lag. Groups of the consumer protocol (KIP-848) are described with
// ConsumerGroupDescribe; the classic DescribeGroups shows them with an empty
// protocol.
package describe

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Partition is one partition of the group's topic.
type Partition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	MemberID  string `json:"member_id"` // "" when no member owns it
	ClientID  string `json:"client_id"`
	Committed int64  `json:"committed"` // -1: nothing committed
	End       int64  `json:"log_end"`
	Lag       int64  `json:"lag"` // -1 with nothing committed, as the tool's "-"
}

// Group is a described group.
type Group struct {
	Name       string      `json:"group"`
	Protocol   string      `json:"protocol"` // "classic" or "consumer"
	Assignor   string      `json:"assignor"`
	State      string      `json:"state"`
	Members    int         `json:"members"`
	Partitions []Partition `json:"partitions"`
}

// Describe describes group on the cluster behind adm.
func Describe(ctx context.Context, adm *kadm.Client, group string) (Group, error) {
	g := Group{Name: group}
	owner, err := g.members(ctx, adm)
	if err != nil {
		return g, err
	}
	committed, topics, err := committedOffsets(ctx, adm, group, owner)
	if err != nil {
		return g, err
	}
	// Per partition: its owner, its log end and what is committed; the lag
	// is the end less the committed offset (none without a commit).
	for t := range topics {
		ends, err := adm.ListEndOffsets(ctx, t)
		if err != nil {
			return g, fmt.Errorf("end offsets of %s: %w", t, err)
		}
		ends.Each(func(e kadm.ListedOffset) {
			p := Partition{Topic: t, Partition: e.Partition, End: e.Offset, Committed: -1, Lag: -1}
			if o, ok := owner[t][e.Partition]; ok {
				p.MemberID, p.ClientID = o[0], o[1]
			}
			if c, ok := committed.Lookup(t, e.Partition); ok && c.Err == nil && c.At >= 0 {
				p.Committed, p.Lag = c.At, e.Offset-c.At
			}
			g.Partitions = append(g.Partitions, p)
		})
	}
	slices.SortFunc(g.Partitions, func(a, b Partition) int {
		if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	return g, nil
}

// owners is who owns each partition: topic -> partition -> member id,
// client id.
type owners map[string]map[int32][2]string

// set records that member, of client, owns partition p of topic.
func (o owners) set(topic string, p int32, member, client string) {
	if topic == "" {
		return // an assignment by topic id alone (the simulation's answer)
	}
	if o[topic] == nil {
		o[topic] = map[int32][2]string{}
	}
	o[topic][p] = [2]string{member, client}
}

// members fills in g's protocol, assignor, state and member count, and
// returns who owns which partition. A group of the consumer protocol
// (KIP-848) is described with ConsumerGroupDescribe; any other is a classic
// one.
func (g *Group) members(ctx context.Context, adm *kadm.Client) (owners, error) {
	owner := owners{}
	cgs, err := adm.DescribeConsumerGroups(ctx, g.Name)
	cg := cgs[g.Name]
	if err != nil || cg.Err != nil {
		// Not a consumer-protocol group: a classic one.
		return owner, g.classicMembers(ctx, adm, owner)
	}
	g.Protocol, g.Assignor, g.State, g.Members = "consumer", cg.AssignorName, cg.State, len(cg.Members)
	for _, m := range cg.Members {
		for t, ps := range m.Assignment {
			for p := range ps {
				owner.set(t, p, m.MemberID, m.ClientID)
			}
		}
	}
	return owner, nil
}

// classicMembers fills in g as a classic group, described with
// DescribeGroups, and who owns which partition into owner. A classic
// group's assignment is bytes to the broker, chosen by the group's leader
// member: AsConsumer decodes them as the consumer protocol's.
func (g *Group) classicMembers(ctx context.Context, adm *kadm.Client, owner owners) error {
	dgs, err := adm.DescribeGroups(ctx, g.Name)
	if err != nil {
		return fmt.Errorf("describing group %s: %w", g.Name, err)
	}
	dg := dgs[g.Name]
	if errors.Is(dg.Err, kerr.GroupIDNotFound) {
		return fmt.Errorf("group %s does not exist: no member has joined it or committed (start one with `make member GROUP=%s`)", g.Name, g.Name)
	}
	if dg.Err != nil {
		return fmt.Errorf("describing group %s: %w", g.Name, dg.Err)
	}
	g.Protocol, g.Assignor, g.State, g.Members = "classic", dg.Protocol, dg.State, len(dg.Members)
	for _, m := range dg.Members {
		if c, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range c.Topics {
				for _, p := range t.Partitions {
					owner.set(t.Topic, p, m.MemberID, m.ClientID)
				}
			}
		}
	}
	return nil
}

// committedOffsets is what group has committed, and the topics to describe:
// those it has committed on and those its members own.
func committedOffsets(ctx context.Context, adm *kadm.Client, group string, owner owners) (kadm.OffsetResponses, map[string]bool, error) {
	all, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return nil, nil, fmt.Errorf("committed offsets of %s: %w", group, err)
	}
	topics := map[string]bool{}
	all.Each(func(o kadm.OffsetResponse) {
		if o.Topic != "" { // a response by topic id alone names no topic
			topics[o.Topic] = true
		}
	})
	for t := range owner {
		topics[t] = true
	}
	// Asked again by name, so every answer names its topic.
	committed, err := adm.FetchOffsetsForTopics(ctx, group, slices.Collect(maps.Keys(topics))...)
	if err != nil {
		return nil, nil, fmt.Errorf("committed offsets of %s: %w", group, err)
	}
	return committed, topics, nil
}

// Print writes the group as a table, like the tool's.
func (g Group) Print(w io.Writer) {
	fmt.Fprintf(w, "group %s: %s protocol, assignor %s, state %s, %d members\n\n", g.Name, g.Protocol, g.Assignor, g.State, g.Members)
	t := brewkit.NewTable(w, "TOPIC", "PARTITION", "COMMITTED", "LOG-END", "LAG", "MEMBER")
	for _, p := range g.Partitions {
		committed, lag, member := "-", "-", "-"
		if p.Committed >= 0 {
			committed, lag = fmt.Sprint(p.Committed), fmt.Sprint(p.Lag)
		}
		if p.MemberID != "" {
			member = p.MemberID
		}
		t.Row(p.Topic, p.Partition, committed, p.End, lag, member)
	}
	t.Flush()
}

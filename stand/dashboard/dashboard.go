// Package dashboard is the model and the drawing of `make dashboard`, a live
// view of the whole course cluster for the projector: nodes (up, stopped,
// paused, the Raft leader, the voters), every topic's partitions with leader
// and ISR, the consumer and share groups with members and lag, the
// produce and consume rates, and, when the course's Prometheus runs (lecture
// 13), the alerts pending and firing. Collect reads a Snapshot; Render draws
// one.
package dashboard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// Snapshot is the cluster at one moment.
type Snapshot struct {
	At      time.Time
	Stand   stand.Flavor // "" when the cluster is not a stand of this checkout
	Image   string       // the docker stand's image line, if any
	Nodes   []Node
	Leader  int32 // Raft leader, -1 when none
	Voters  []int32
	Topics  []Topic
	Groups  []Group
	Produce float64 // records/s written to all topics since the previous snapshot
	Consume float64 // records/s committed by all consumer groups since the previous snapshot
	Alerts  []Alert // pending and firing alerts of the course's Prometheus; nil when none answers
	Err     string  // what could not be read this time

	ends      int64 // sum of all end offsets, for the next rate
	committed int64 // sum of all groups' committed offsets
}

// Node is one node of the cluster.
type Node struct {
	ID         int32
	State      string // up, stopped, paused, or "?" for a cluster no stand of ours runs
	Registered bool   // a broker in the cluster's metadata
}

// Topic is one topic with its partitions.
type Topic struct {
	Name       string
	Partitions []Partition
}

// UnderReplicated counts the partitions whose ISR is smaller than their replicas.
func (t Topic) UnderReplicated() int {
	n := 0
	for _, p := range t.Partitions {
		if p.UnderReplicated() {
			n++
		}
	}
	return n
}

// Partition is one partition: where it lives and which replicas are in sync.
type Partition struct {
	ID       int32
	Leader   int32
	Replicas []int32
	ISR      []int32
	End      int64 // the high watermark
}

// UnderReplicated reports whether a replica is out of the ISR.
func (p Partition) UnderReplicated() bool { return len(p.ISR) < len(p.Replicas) }

// Group is a consumer group or a share group.
type Group struct {
	Name    string
	Kind    string // consumer, classic or share
	State   string
	Members int
	Lag     int64 // records not yet consumed (share groups: not yet acknowledged); -1 unknown
}

// Collect reads a snapshot. s may be nil (a cluster on KAFKA_BOOTSTRAP that
// no stand of this checkout runs); prev, the previous snapshot, gives rates.
func Collect(ctx context.Context, s *stand.Stand, cl *kgo.Client, prev *Snapshot) Snapshot {
	c := &collector{snap: Snapshot{At: time.Now(), Leader: -1}, cl: cl, adm: kadm.NewClient(cl)}
	// On the course stand its status has the nodes, the brokers and the
	// quorum; on a cluster of its own (KAFKA_BOOTSTRAP) the brokers and the
	// quorum are asked here.
	if !c.standStatus(ctx, s) {
		c.read(ctx, "brokers", c.brokers)
		c.read(ctx, "quorum", c.quorum)
	}
	c.read(ctx, "topics", c.topics)
	c.read(ctx, "groups", c.groups)
	c.read(ctx, "alerts", c.alerts)
	c.snap.rates(prev)
	c.snap.Err = strings.Join(c.errs, "; ")
	return c.snap
}

// collector fills in one snapshot, noting what it could not read.
type collector struct {
	snap Snapshot
	errs []string
	cl   *kgo.Client
	adm  *kadm.Client
}

// read runs one read of the cluster, noting its error as what failed.
func (c *collector) read(ctx context.Context, what string, f func(context.Context) error) {
	// One slow answer (a paused node holds a request until it times out)
	// must not freeze the whole view: each read gets its own second.
	ctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	if err := f(ctx); err != nil {
		c.errs = append(c.errs, what+": "+shortErr(err))
	}
}

// standStatus takes the nodes, the Raft leader and the voters from the
// status of the course stand that is up; it reports false when there is none
// or its status cannot be read.
func (c *collector) standStatus(ctx context.Context, s *stand.Stand) bool {
	if s == nil || s.Current() == "" {
		return false
	}
	c.snap.Stand = s.Current()
	st, err := s.Status(ctx)
	if err != nil {
		return false
	}
	c.snap.Image, c.snap.Leader, c.snap.Voters = st.Image, st.Leader, st.Voters
	if st.Leader < 0 && st.Quorum != "" {
		c.errs = append(c.errs, "quorum: "+shortErr(errors.New(st.Quorum)))
	}
	for _, n := range st.Nodes {
		state := "stopped"
		switch {
		case n.Paused:
			state = "paused"
		case n.Running:
			state = "up"
		}
		c.snap.Nodes = append(c.snap.Nodes, Node{ID: int32(n.ID), State: state, Registered: n.Registered})
	}
	return true
}

// brokers lists the registered brokers as nodes whose process is unknown.
func (c *collector) brokers(ctx context.Context) error {
	md, err := c.adm.BrokerMetadata(ctx)
	for _, id := range md.Brokers.NodeIDs() {
		c.snap.Nodes = append(c.snap.Nodes, Node{ID: id, State: "?", Registered: true})
	}
	return err
}

// quorum asks the cluster for its Raft leader and voters.
func (c *collector) quorum(ctx context.Context) error {
	q, err := brewkit.DescribeQuorum(ctx, c.cl)
	if err == nil {
		c.snap.Leader, c.snap.Voters = q.LeaderID, q.VoterIDs()
	}
	return err
}

// topics reads every topic's partitions with their leaders, replicas, ISR
// and end offsets.
func (c *collector) topics(ctx context.Context) error {
	td, err := c.adm.ListTopics(ctx)
	if err != nil {
		return err
	}
	ends, err := c.adm.ListEndOffsets(ctx, td.Names()...)
	if err != nil {
		return err
	}
	for _, d := range td.Sorted() {
		t := Topic{Name: d.Topic}
		for _, p := range d.Partitions.Sorted() {
			end, _ := ends.Lookup(d.Topic, p.Partition)
			t.Partitions = append(t.Partitions, Partition{ID: p.Partition, Leader: p.Leader,
				Replicas: sorted(p.Replicas), ISR: sorted(p.ISR), End: end.Offset})
			c.snap.ends += max(end.Offset, 0)
		}
		c.snap.Topics = append(c.snap.Topics, t)
	}
	return nil
}

// groups reads the consumer groups, then the share groups.
func (c *collector) groups(ctx context.Context) error {
	listed, err := c.adm.ListGroups(ctx)
	if err != nil {
		return err
	}
	var consumer, share []string
	for _, g := range listed.Sorted() {
		if g.GroupType == "share" {
			share = append(share, g.Group)
		} else {
			consumer = append(consumer, g.Group)
		}
	}
	if err := c.consumerGroups(ctx, listed, consumer); err != nil {
		return err
	}
	return c.shareGroups(ctx, share)
}

// consumerGroups reads each consumer group's state, members and lag, and
// adds up their committed offsets for the consume rate.
func (c *collector) consumerGroups(ctx context.Context, listed kadm.ListedGroups, names []string) error {
	if len(names) == 0 {
		return nil
	}
	lags, err := c.adm.Lag(ctx, names...)
	if err != nil {
		return err
	}
	for _, name := range names {
		l := lags[name]
		kind := listed[name].GroupType
		if kind == "" {
			kind = "classic"
		}
		g := Group{Name: name, Kind: kind, State: l.State, Members: len(l.Members), Lag: -1}
		if l.Error() == nil {
			g.Lag = l.Lag.Total()
			for _, ps := range l.Lag {
				for _, p := range ps {
					c.snap.committed += max(p.Commit.At, 0)
				}
			}
		}
		c.snap.Groups = append(c.snap.Groups, g)
	}
	return nil
}

// shareGroups reads each share group's state, members and the records it
// has not acknowledged yet.
func (c *collector) shareGroups(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	described, err := c.adm.DescribeShareGroups(ctx, names...)
	if err != nil {
		return err
	}
	offsets, _ := c.adm.DescribeShareGroupOffsets(ctx, names...)
	for _, name := range names {
		d := described[name]
		g := Group{Name: name, Kind: "share", State: d.GroupState, Members: len(d.Members), Lag: -1}
		if o, ok := offsets[name]; ok && o.Err == nil {
			g.Lag = 0
			for _, ps := range o.Offsets {
				for _, p := range ps {
					if p.Lag >= 0 {
						g.Lag += p.Lag
					}
				}
			}
		}
		c.snap.Groups = append(c.snap.Groups, g)
	}
	return nil
}

// rates sets the produce and consume rates from what the end offsets and the
// committed offsets moved since prev.
func (s *Snapshot) rates(prev *Snapshot) {
	if prev == nil || prev.At.IsZero() {
		return
	}
	if secs := s.At.Sub(prev.At).Seconds(); secs > 0 {
		s.Produce = max(float64(s.ends-prev.ends)/secs, 0)
		s.Consume = max(float64(s.committed-prev.committed)/secs, 0)
	}
}

func sorted(ids []int32) []int32 { return slices.Sorted(slices.Values(ids)) }

func shortErr(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer within 1.5s"
	}
	s := err.Error()
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// ids prints [1 2 3].
func ids(v []int32) string { return fmt.Sprint(v) }

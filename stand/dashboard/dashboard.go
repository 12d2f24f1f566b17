// Package dashboard is the model and the drawing of `make dashboard`, a live
// view of the whole course cluster for the projector: nodes (up, stopped,
// paused, the Raft leader, the voters), every topic's partitions with leader
// and ISR, the consumer and share groups with members and lag, and the
// produce and consume rates. Collect reads a Snapshot; Render draws one.
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
	snap := Snapshot{At: time.Now(), Leader: -1}
	var errs []string
	adm := kadm.NewClient(cl)
	step := func(what string, f func(context.Context) error) {
		// One slow answer (a paused node holds a request until it times out)
		// must not freeze the whole view: each read gets its own second.
		ctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
		defer cancel()
		if err := f(ctx); err != nil {
			errs = append(errs, what+": "+shortErr(err))
		}
	}

	// On the course stand its status has the nodes, the brokers and the
	// quorum; on a cluster of its own (KAFKA_BOOTSTRAP) the brokers and the
	// quorum are asked here.
	status := false
	if s != nil && s.Current() != "" {
		snap.Stand = s.Current()
		if st, err := s.Status(ctx); err == nil {
			status = true
			snap.Image, snap.Leader, snap.Voters = st.Image, st.Leader, st.Voters
			if st.Leader < 0 && st.Quorum != "" {
				errs = append(errs, "quorum: "+shortErr(errors.New(st.Quorum)))
			}
			for _, n := range st.Nodes {
				state := "stopped"
				switch {
				case n.Paused:
					state = "paused"
				case n.Running:
					state = "up"
				}
				snap.Nodes = append(snap.Nodes, Node{ID: int32(n.ID), State: state, Registered: n.Registered})
			}
		}
	}
	if !status {
		step("brokers", func(ctx context.Context) error {
			md, err := adm.BrokerMetadata(ctx)
			for _, id := range md.Brokers.NodeIDs() {
				snap.Nodes = append(snap.Nodes, Node{ID: id, State: "?", Registered: true})
			}
			return err
		})
		step("quorum", func(ctx context.Context) error {
			q, err := brewkit.DescribeQuorum(ctx, cl)
			if err == nil {
				snap.Leader, snap.Voters = q.LeaderID, q.VoterIDs()
			}
			return err
		})
	}
	step("topics", func(ctx context.Context) error {
		td, err := adm.ListTopics(ctx)
		if err != nil {
			return err
		}
		ends, err := adm.ListEndOffsets(ctx, td.Names()...)
		if err != nil {
			return err
		}
		for _, d := range td.Sorted() {
			t := Topic{Name: d.Topic}
			for _, p := range d.Partitions.Sorted() {
				end, _ := ends.Lookup(d.Topic, p.Partition)
				t.Partitions = append(t.Partitions, Partition{ID: p.Partition, Leader: p.Leader,
					Replicas: sorted(p.Replicas), ISR: sorted(p.ISR), End: end.Offset})
				snap.ends += max(end.Offset, 0)
			}
			snap.Topics = append(snap.Topics, t)
		}
		return nil
	})
	step("groups", func(ctx context.Context) error {
		listed, err := adm.ListGroups(ctx)
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
		if len(consumer) > 0 {
			lags, err := adm.Lag(ctx, consumer...)
			if err != nil {
				return err
			}
			for _, name := range consumer {
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
							snap.committed += max(p.Commit.At, 0)
						}
					}
				}
				snap.Groups = append(snap.Groups, g)
			}
		}
		if len(share) > 0 {
			described, err := adm.DescribeShareGroups(ctx, share...)
			if err != nil {
				return err
			}
			offsets, _ := adm.DescribeShareGroupOffsets(ctx, share...)
			for _, name := range share {
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
				snap.Groups = append(snap.Groups, g)
			}
		}
		return nil
	})
	if prev != nil && !prev.At.IsZero() {
		if secs := snap.At.Sub(prev.At).Seconds(); secs > 0 {
			snap.Produce = max(float64(snap.ends-prev.ends)/secs, 0)
			snap.Consume = max(float64(snap.committed-prev.committed)/secs, 0)
		}
	}
	snap.Err = strings.Join(errs, "; ")
	return snap
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

// Package quorum computes what quorum-status prints: the cluster id, the
// registered brokers, the controller id a broker hands out in metadata, and the
// real Raft leader and voters of the KRaft quorum.
package quorumstatus

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Status is one look at the cluster's metadata and quorum.
type Status struct {
	ClusterID string   `json:"cluster_id"`
	Brokers   []Broker `json:"brokers"`
	// ControllerProxy is BrokerMetadata.Controller: in KRaft, the broker that
	// forwards controller requests, not the Raft leader.
	ControllerProxy int32 `json:"metadata_controller_proxy"`
	// RaftLeader is DescribeQuorum's LeaderID: the active controller; -1 while
	// the voters have no leader.
	RaftLeader  int32   `json:"raft_leader"`
	LeaderEpoch int32   `json:"leader_epoch"`
	Voters      []int32 `json:"current_voters"`
	// QuorumUnavailable says why the cluster did not answer DescribeQuorum
	// (managed services often deny it, older or non-Apache brokers lack it);
	// then RaftLeader is -1 and Voters is empty.
	QuorumUnavailable string `json:"quorum_unavailable,omitempty"`
	Simulated         bool   `json:"simulated"`
}

// Broker is a registered broker from the metadata.
type Broker struct {
	ID   int32  `json:"node"`
	Host string `json:"host"`
	Port int32  `json:"port"`
	Rack string `json:"rack,omitempty"`
}

// Describe asks the cluster two questions: BrokerMetadata (kadm) for the
// brokers and the controller proxy, DescribeQuorum (kmsg) for the Raft leader.
func Describe(ctx context.Context, cl *kgo.Client) (Status, error) {
	adm := kadm.NewClient(cl)
	// kadm answers BrokerMetadata from the client's metadata cache, which keeps
	// a stopped broker listed; WithAuthorizedOps makes it ask the cluster.
	md, err := adm.BrokerMetadata(kadm.WithAuthorizedOps(ctx))
	if err != nil {
		return Status{}, fmt.Errorf("BrokerMetadata: %w", err)
	}
	st := Status{ClusterID: md.Cluster, ControllerProxy: md.Controller, RaftLeader: -1}
	leader, epoch, voters, err := describeQuorum(ctx, cl)
	switch {
	case err == nil:
		st.RaftLeader, st.LeaderEpoch, st.Voters = leader, epoch, voters
	case ctx.Err() != nil:
		return Status{}, err // no answer in time: the quorum may have no majority
	default:
		// The cluster answers, but not this question: show what metadata gives.
		st.QuorumUnavailable = strings.TrimPrefix(err.Error(), "DescribeQuorum: ")
	}
	if st.Simulated, err = brewkit.IsSimulated(ctx, cl); err != nil {
		return Status{}, err
	}
	slices.Sort(st.Voters)
	for _, b := range md.Brokers {
		br := Broker{ID: b.NodeID, Host: b.Host, Port: b.Port}
		if b.Rack != nil {
			br.Rack = *b.Rack
		}
		st.Brokers = append(st.Brokers, br)
	}
	slices.SortFunc(st.Brokers, func(a, b Broker) int { return int(a.ID - b.ID) })
	return st, nil
}

// describeQuorum asks for the Raft quorum of the metadata log,
// __cluster_metadata's partition 0: its leader (the active controller, -1
// while there is none), the leader's epoch and the voters. kadm has no
// wrapper for DescribeQuorum, so the kmsg request is built by hand; kgo
// sends it to a broker, which forwards it to the active controller.
func describeQuorum(ctx context.Context, cl *kgo.Client) (leader, epoch int32, voters []int32, err error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	topic := kmsg.NewDescribeQuorumRequestTopic()
	topic.Topic = "__cluster_metadata"
	part := kmsg.NewDescribeQuorumRequestTopicPartition()
	part.Partition = 0
	topic.Partitions = append(topic.Partitions, part)
	req.Topics = append(req.Topics, topic)

	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return -1, 0, nil, fmt.Errorf("DescribeQuorum: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return -1, 0, nil, fmt.Errorf("DescribeQuorum: %w", err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return -1, 0, nil, fmt.Errorf("DescribeQuorum: unexpected answer with %d topics", len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return -1, 0, nil, fmt.Errorf("DescribeQuorum __cluster_metadata-0: %w", err)
	}
	for _, v := range p.CurrentVoters {
		voters = append(voters, v.ReplicaID)
	}
	return p.LeaderID, p.LeaderEpoch, voters, nil
}

// Role is a node's part in the cluster.
func (s Status) Role(node int32) string {
	voter := slices.Contains(s.Voters, node)
	broker := slices.ContainsFunc(s.Brokers, func(b Broker) bool { return b.ID == node })
	switch {
	case !broker && voter:
		return "voter, not answering"
	case voter && node == s.RaftLeader:
		return "broker + active controller"
	case voter:
		return "broker + voter"
	}
	return "broker"
}

// Row is one line of the node table.
type Row struct {
	Node       int32
	Host, Port string
	Rack, Role string
}

// Rows lists every broker and every voter, by node id.
func (s Status) Rows() []Row {
	var rows []Row
	seen := map[int32]bool{}
	for _, b := range s.Brokers {
		rack := b.Rack
		if rack == "" {
			rack = "-"
		}
		rows = append(rows, Row{b.ID, b.Host, strconv.Itoa(int(b.Port)), rack, s.Role(b.ID)})
		seen[b.ID] = true
	}
	for _, v := range s.Voters {
		if !seen[v] {
			rows = append(rows, Row{v, "-", "-", "-", s.Role(v)})
		}
	}
	slices.SortFunc(rows, func(a, b Row) int { return int(a.Node - b.Node) })
	return rows
}

// Print writes the status the way the lecture's README shows it.
func (s Status) Print(w io.Writer) {
	leader := "none (the voters are electing a leader, or no majority is up)"
	voters := fmt.Sprint(s.Voters)
	switch {
	case s.QuorumUnavailable != "":
		leader = fmt.Sprintf("unavailable (%s)", s.QuorumUnavailable)
		voters = "unavailable"
	case s.RaftLeader >= 0:
		leader = fmt.Sprintf("%d  (DescribeQuorum on __cluster_metadata: the active controller)", s.RaftLeader)
	}
	fmt.Fprintf(w, "ClusterID:               %s\n", s.ClusterID)
	fmt.Fprintf(w, "Brokers:                 %d\n", len(s.Brokers))
	fmt.Fprintf(w, "MetadataControllerProxy: %d  (BrokerMetadata.Controller: in KRaft a proxy, not the Raft leader)\n", s.ControllerProxy)
	fmt.Fprintf(w, "RaftLeader:              %s\n", leader)
	fmt.Fprintf(w, "CurrentVoters:           %s\n", voters)
	if s.Simulated {
		fmt.Fprintf(w, "Stand:                   embedded simulation: the quorum is simulated, node 3 always leads (real Kafka: make up STAND=native)\n")
	}
	fmt.Fprintln(w)
	t := brewkit.NewTable(w, "NODE", "HOST", "PORT", "RACK", "ROLE")
	for _, r := range s.Rows() {
		t.Row(r.Node, r.Host, r.Port, r.Rack, r.Role)
	}
	t.Flush()
}

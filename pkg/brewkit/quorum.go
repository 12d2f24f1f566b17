package brewkit

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadataTopic is the KRaft metadata log; its partition 0 is the Raft quorum.
const metadataTopic = "__cluster_metadata"

// Quorum is the KRaft quorum as DescribeQuorum reports it.
type Quorum struct {
	LeaderID      int32 // the active controller; -1 while there is none
	LeaderEpoch   int32
	HighWatermark int64
	Voters        []Voter
	Observers     []Voter // replicas that fetch the metadata log without a vote: brokers only, controllers not (yet) added
}

// Voter is one voter of the quorum.
type Voter struct {
	ID           int32
	Directory    [16]byte // its metadata log directory's id (zero in a static quorum's answer: KIP-853)
	LogEndOffset int64
	LastFetch    time.Time // zero when unknown
	LastCaughtUp time.Time // zero when unknown
}

// VoterIDs returns the voters' node ids in the order Kafka reports them.
func (q Quorum) VoterIDs() []int32 {
	ids := make([]int32, len(q.Voters))
	for i, v := range q.Voters {
		ids[i] = v.ID
	}
	return ids
}

// DescribeQuorum asks the cluster for the Raft quorum of __cluster_metadata.
// kadm has no wrapper for it, so this builds the kmsg request by hand; kgo
// sends it to a broker, which forwards it to the active controller.
func DescribeQuorum(ctx context.Context, cl *kgo.Client) (Quorum, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	topic := kmsg.NewDescribeQuorumRequestTopic()
	topic.Topic = metadataTopic
	part := kmsg.NewDescribeQuorumRequestTopicPartition()
	part.Partition = 0
	topic.Partitions = append(topic.Partitions, part)
	req.Topics = append(req.Topics, topic)

	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return Quorum{}, fmt.Errorf("DescribeQuorum: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return Quorum{}, fmt.Errorf("DescribeQuorum: %w", err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return Quorum{}, fmt.Errorf("DescribeQuorum: unexpected answer with %d topics", len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return Quorum{}, fmt.Errorf("DescribeQuorum %s-0: %w", metadataTopic, err)
	}
	q := Quorum{LeaderID: p.LeaderID, LeaderEpoch: p.LeaderEpoch, HighWatermark: p.HighWatermark}
	replica := func(v kmsg.DescribeQuorumResponseTopicPartitionReplicaState) Voter {
		return Voter{
			ID:           v.ReplicaID,
			Directory:    v.ReplicaDirectoryID,
			LogEndOffset: v.LogEndOffset,
			LastFetch:    millis(v.LastFetchTimestamp),
			LastCaughtUp: millis(v.LastCaughtUpTimestamp),
		}
	}
	for _, v := range p.CurrentVoters {
		q.Voters = append(q.Voters, replica(v))
	}
	for _, v := range p.Observers {
		q.Observers = append(q.Observers, replica(v))
	}
	return q, nil
}

func millis(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

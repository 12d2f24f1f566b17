// The reference solution of exercise 01/controller.
package controller

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Controller asks the quorum itself: DescribeQuorum on partition 0 of
// __cluster_metadata, which a broker forwards to the active controller.
func Controller(ctx context.Context, cl *kgo.Client) (leader int32, voters []int32, err error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	topic := kmsg.NewDescribeQuorumRequestTopic()
	topic.Topic = "__cluster_metadata"
	part := kmsg.NewDescribeQuorumRequestTopicPartition()
	part.Partition = 0
	topic.Partitions = append(topic.Partitions, part)
	req.Topics = append(req.Topics, topic)

	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return 0, nil, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return 0, nil, fmt.Errorf("DescribeQuorum answered %d topics", len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return 0, nil, err
	}
	for _, v := range p.CurrentVoters {
		voters = append(voters, v.ReplicaID)
	}
	slices.Sort(voters)
	return p.LeaderID, voters, nil
}

// Package controller is exercise 01/controller: find the active controller and the voters.
//
// Graded on: real Kafka.
//
// Brew's on-call dashboard must say which node runs the cluster right now,
// so that the engineer on duty knows whose failure means an election. Write
// Controller: given a client of the cluster, return the node id of the
// active controller (the leader of the KRaft quorum) and the node ids of the
// quorum's voters, sorted. Build the request yourself rather than calling
// brewkit.DescribeQuorum, the lecture's answer. The grader calls your
// function 20 times, each on a new client, and compares every answer with
// what the quorum itself reports at that moment.
package controller

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Controller returns the active controller's node id and the voters of the
// KRaft quorum, sorted by node id.
func Controller(ctx context.Context, cl *kgo.Client) (leader int32, voters []int32, err error) {
	// TODO: ask the cluster who leads the quorum and who votes in it.
	return 0, nil, nil
}

package commitstyles

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A commit counts the offsets the broker confirmed: not a partition it
// refused, not a request that failed.
func TestConfirmedIsWhatTheBrokerAccepted(t *testing.T) {
	req := kmsg.NewPtrOffsetCommitRequest()
	resp := kmsg.NewPtrOffsetCommitResponse()
	for p, o := range []int64{20, 40} {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = int32(p), o
		sp := kmsg.NewOffsetCommitResponseTopicPartition()
		sp.Partition = int32(p)
		if p == 1 {
			sp.ErrorCode = 27 // REBALANCE_IN_PROGRESS
		}
		if p == 0 {
			req.Topics = append(req.Topics, kmsg.NewOffsetCommitRequestTopic())
			resp.Topics = append(resp.Topics, kmsg.NewOffsetCommitResponseTopic())
		}
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
		resp.Topics[0].Partitions = append(resp.Topics[0].Partitions, sp)
	}
	var got []int64
	cb := confirmed(func(o int64) { got = append(got, o) })
	cb(nil, req, resp, nil)
	require.Equal(t, []int64{20}, got)
	cb(nil, req, nil, errors.New("broken pipe"))
	require.Equal(t, []int64{20}, got)
}

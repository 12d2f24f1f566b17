// The reference solution of exercise 03/replay.
package replay

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ReplayFrom asks the cluster for each partition's first offset at or after
// at (ListOffsets by timestamp, in milliseconds; kadm answers the end offset
// where no record is that new) and commits those offsets for the group.
func ReplayFrom(ctx context.Context, cl *kgo.Client, group, topic string, at time.Time) error {
	adm := kadm.NewClient(cl)
	listed, err := adm.ListOffsetsAfterMilli(ctx, at.UnixMilli(), topic)
	if err != nil {
		return err
	}
	if err := listed.Error(); err != nil {
		return err
	}
	resp, err := adm.CommitOffsets(ctx, group, listed.Offsets())
	if err != nil {
		return err
	}
	return resp.Error()
}

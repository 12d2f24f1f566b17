// A plausible wrong solution of exercise 03/replay: the right question, but
// the time in seconds since the epoch where Kafka wants milliseconds, so it
// asks for offsets after a moment in January 1970 and the group re-reads
// every partition from the start. The grader must fail it.
package replay

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func ReplayFrom(ctx context.Context, cl *kgo.Client, group, topic string, at time.Time) error {
	adm := kadm.NewClient(cl)
	listed, err := adm.ListOffsetsAfterMilli(ctx, at.Unix(), topic)
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

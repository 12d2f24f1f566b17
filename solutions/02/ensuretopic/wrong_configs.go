// A plausible wrong solution of exercise 02/ensuretopic: partitions and
// replication factor, but no configs, so the topic keeps records as long as
// the broker's default says (7 days), not the 30 days asked for. The grader
// must fail it.
package ensuretopic

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

type Topic struct {
	Name       string
	Partitions int32
	RF         int16
	Retention  time.Duration
}

func EnsureTopic(ctx context.Context, adm *kadm.Client, t Topic) error {
	_, err := adm.CreateTopic(ctx, t.Partitions, t.RF, nil, t.Name)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return err
	}
	return nil
}

// A plausible wrong solution of exercise 02/ensuretopic: it creates the
// topic right, but passes on TOPIC_ALREADY_EXISTS as a failure, so every
// instance but the first fails to start. The grader must fail it.
package ensuretopic

import (
	"context"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

type Topic struct {
	Name       string
	Partitions int32
	RF         int16
	Retention  time.Duration
}

func EnsureTopic(ctx context.Context, adm *kadm.Client, t Topic) error {
	retention := strconv.FormatInt(t.Retention.Milliseconds(), 10)
	_, err := adm.CreateTopic(ctx, t.Partitions, t.RF, map[string]*string{"retention.ms": &retention}, t.Name)
	return err
}

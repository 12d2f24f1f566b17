// A plausible wrong solution of exercise 02/ensuretopic: it uses kadm's
// CreateTopics and checks only its error, which reports a request that
// failed, not a topic the cluster refused; each topic's answer is in the
// response. "Already exists" then passes by luck, and so does every other
// refusal. The grader must fail it.
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
	_, err := adm.CreateTopics(ctx, t.Partitions, t.RF, map[string]*string{"retention.ms": &retention}, t.Name)
	return err
}

// The reference solution of exercise 02/ensuretopic.
package ensuretopic

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Topic is a topic as a service wants it.
type Topic struct {
	Name       string
	Partitions int32
	RF         int16         // replication factor
	Retention  time.Duration // retention.ms
}

// EnsureTopic creates t with its settings; TOPIC_ALREADY_EXISTS means
// another instance was first, which is what the caller wanted. kadm's
// CreateTopic returns the topic's own error (CreateTopics would leave it in
// the response).
func EnsureTopic(ctx context.Context, adm *kadm.Client, t Topic) error {
	retention := strconv.FormatInt(t.Retention.Milliseconds(), 10)
	_, err := adm.CreateTopic(ctx, t.Partitions, t.RF, map[string]*string{"retention.ms": &retention}, t.Name)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("creating %s: %w", t.Name, err)
	}
	return nil
}

package brewkit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// UnknownTopicGrace is how long a partition may be unknown to the broker a
// consumer fetches from before that counts as an error: right after a topic
// is created, brokers learn of it a moment apart; a deleted topic stays unknown.
const UnknownTopicGrace = 5 * time.Second

// ConsumeErrors is the consumer option every course reader adds: kgo then
// also returns the fetch errors it retries by itself (an unknown topic), so
// that FetchCheck can report a topic deleted under the reader.
func ConsumeErrors() kgo.Opt { return kgo.KeepRetryableFetchErrors() }

// FetchCheck finds, in a consumer's fetches, the error its program must
// report rather than wait on: any error Kafka will not retry (authorization,
// authentication, a corrupt record), and a topic that stays unknown longer
// than UnknownTopicGrace. A cancelled poll and a closed client are not errors,
// nor are errors kgo retries by itself (a leader moving, a broker connection
// dying under a group session that kgo then rejoins). The zero value is
// ready to use; one FetchCheck follows one consumer.
type FetchCheck struct {
	unknownSince map[string]time.Time
}

// Err returns the first error of fs to report, naming topic and partition.
func (c *FetchCheck) Err(fs kgo.Fetches) error {
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if p.Err == nil {
			delete(c.unknownSince, fmt.Sprintf("%s/%d", p.Topic, p.Partition))
		}
	})
	for _, fe := range fs.Errors() {
		err := fe.Err
		var dataLoss *kgo.ErrDataLoss
		var groupErr *kgo.ErrGroupSession
		switch {
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, kgo.ErrClientClosed):
			continue
		case errors.As(err, &dataLoss):
			continue // kgo resets and goes on; the programs count what is lost themselves
		case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
			key := fmt.Sprintf("%s/%d", fe.Topic, fe.Partition)
			if c.unknownSince == nil {
				c.unknownSince = map[string]time.Time{}
			}
			first, ok := c.unknownSince[key]
			if !ok {
				c.unknownSince[key] = time.Now()
				continue
			}
			if time.Since(first) < UnknownTopicGrace {
				continue
			}
			return fmt.Errorf("reading %s: %w (for %s: was the topic deleted?)", fe.Topic, err, UnknownTopicGrace)
		case errors.As(err, &groupErr) && !groupFatal(groupErr.Err):
			// kgo tells through a fetch error that joining the group
			// failed (a dead connection, a coordinator moving), and
			// keeps rejoining by itself.
			continue
		case kerr.IsRetriable(err), kgo.IsRetryableBrokerErr(err):
			continue
		}
		return fmt.Errorf("reading %s partition %d: %w", fe.Topic, fe.Partition, err)
	}
	return nil
}

// groupFatal: a group session error that rejoining does not cure.
func groupFatal(err error) bool {
	for _, fatal := range []error{
		kerr.GroupAuthorizationFailed, kerr.TopicAuthorizationFailed, kerr.SaslAuthenticationFailed,
		kerr.InvalidGroupID, kerr.FencedInstanceID, kerr.InconsistentGroupProtocol, kerr.UnsupportedAssignor,
		kerr.GroupMaxSizeReached, kerr.UnsupportedVersion,
	} {
		if errors.Is(err, fatal) {
			return true
		}
	}
	return false
}

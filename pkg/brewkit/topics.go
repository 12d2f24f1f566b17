package brewkit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Topic is one of Brew's topics as the course creates it.
type Topic struct {
	Name       string
	Partitions int32
	RF         int16
	Retention  time.Duration
}

// The Brew topics. Orders and payments stay 30 days, the kitchen and shipment
// streams 7 days; what must live for years goes to object storage, not Kafka.
var (
	Orders    = Topic{Name: "brew.orders.v1", Partitions: 6, RF: 3, Retention: 30 * 24 * time.Hour}
	Payments  = Topic{Name: "brew.payments.v1", Partitions: 3, RF: 3, Retention: 30 * 24 * time.Hour}
	Kitchen   = Topic{Name: "brew.kitchen.v1", Partitions: 3, RF: 3, Retention: 7 * 24 * time.Hour}
	Shipments = Topic{Name: "brew.shipments.v1", Partitions: 3, RF: 3, Retention: 7 * 24 * time.Hour}
)

// Catalog lists the Brew topics in the order of an order's life.
var Catalog = []Topic{Orders, Payments, Kitchen, Shipments}

// Configs are the topic configs the course sets at creation.
func (t Topic) Configs() map[string]*string {
	ms := strconv.FormatInt(t.Retention.Milliseconds(), 10)
	return map[string]*string{"retention.ms": &ms}
}

// EnsureTopics creates the topics that do not exist yet and leaves the others
// as they are. It returns the names it created.
func EnsureTopics(ctx context.Context, adm *kadm.Client, topics ...Topic) ([]string, error) {
	var created []string
	for _, t := range topics {
		resp, err := adm.CreateTopic(ctx, t.Partitions, t.RF, t.Configs(), t.Name)
		switch {
		case err == nil && resp.Err == nil:
			created = append(created, t.Name)
		case errors.Is(err, kerr.TopicAlreadyExists) || errors.Is(resp.Err, kerr.TopicAlreadyExists):
		case err != nil:
			return created, fmt.Errorf("creating %s: %w", t.Name, err)
		default:
			return created, fmt.Errorf("creating %s: %w", t.Name, resp.Err)
		}
	}
	if len(created) > 0 {
		// Metadata reaches every broker a moment after the controller commits it.
		if err := WaitTopics(ctx, adm, created...); err != nil {
			return created, err
		}
	}
	return created, nil
}

// WaitTopics waits until metadata shows every partition of the topics with a
// leader, and every replica's broker has the partition's log. Each broker
// applies the controller's record a moment after the create returns (a node
// just restarted may be seconds behind) and answers UNKNOWN_TOPIC_OR_PARTITION
// until it has; it creates the log after it has updated what it answers.
func WaitTopics(ctx context.Context, adm *kadm.Client, names ...string) error {
	for {
		missing := notEverywhere(ctx, adm, names)
		if missing == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for topics %v on every replica (%s): %w", names, missing, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// notEverywhere says what the topics still lack, or "".
func notEverywhere(ctx context.Context, adm *kadm.Client, names []string) string {
	td, err := adm.ListTopics(kadm.WithAuthorizedOps(ctx), names...)
	switch {
	case err != nil:
		return err.Error()
	case !ready(td, names):
		return "a partition has no leader yet"
	}
	replicas := map[int32]kadm.TopicsSet{}
	for _, t := range td {
		for _, p := range t.Partitions {
			for _, r := range p.Replicas {
				set := replicas[r]
				set.Add(t.Topic, p.Partition)
				replicas[r] = set
			}
		}
	}
	for node, set := range replicas {
		dirs, err := adm.DescribeBrokerLogDirs(ctx, node, set)
		if err != nil {
			return fmt.Sprintf("node %d: %v", node, err)
		}
		for t, ps := range set {
			for p := range ps {
				if _, ok := dirs.LookupPartition(t, p); !ok {
					return fmt.Sprintf("node %d has no log for %s partition %d yet", node, t, p)
				}
			}
		}
	}
	return ""
}

func ready(td kadm.TopicDetails, names []string) bool {
	for _, n := range names {
		t, ok := td[n]
		if !ok || t.Err != nil || len(t.Partitions) == 0 {
			return false
		}
		for _, p := range t.Partitions {
			if p.Leader < 0 || p.Err != nil {
				return false
			}
		}
	}
	return true
}

// TopicNamed returns the catalog's topic of that name, or a topic with that
// name and the given partitions, RF 3 and 7-day retention for any other name.
func TopicNamed(name string, partitions int32) Topic {
	for _, t := range Catalog {
		if t.Name == name {
			return t
		}
	}
	return Topic{Name: name, Partitions: partitions, RF: 3, Retention: 7 * 24 * time.Hour}
}

// Sleep waits for d, or returns ctx's error as soon as ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// WaitFor checks cond every interval until it holds, ctx ends, or limit passes.
// A cancelled ctx is reported as ctx's error, never as "not within".
func WaitFor(ctx context.Context, limit, every time.Duration, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if cond() {
			return nil
		}
		if ctx.Err() == nil && time.Now().After(deadline) {
			return fmt.Errorf("not within %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
}

// EndOffsets lists topic's end offsets and retries, up to 10 s, while a
// partition answers with an error: right after a topic is created its
// leaders may not serve ListOffsets yet, and kadm leaves such a partition's
// offset at -1, which kgo reads as "the end" — a reader started there would
// wait forever for records already written.
func EndOffsets(ctx context.Context, adm *kadm.Client, topic string) (kadm.ListedOffsets, error) {
	var ends kadm.ListedOffsets
	var err error
	werr := WaitFor(ctx, 10*time.Second, 100*time.Millisecond, func() bool {
		ends, err = adm.ListEndOffsets(ctx, topic)
		if err == nil {
			err = ends.Error()
		}
		return err == nil
	})
	if werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	return ends, nil
}

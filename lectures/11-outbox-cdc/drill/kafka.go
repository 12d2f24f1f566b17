package drill

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// CheckTopic is where each program of the lecture, before it touches
// PostgreSQL or Kafka Connect, writes one record and reads it back (Kafka).
// Kept an hour; `make reset-lecture` deletes it with the lecture's other
// topics.
var CheckTopic = brewkit.Topic{Name: "brew.outbox.check", Partitions: 1, RF: 3, Retention: time.Hour}

// Kafka is every demo's first step: it connects to cfg's cluster, creates
// topics (those that do not exist yet) and CheckTopic, and writes a record
// to CheckTopic and reads it back. So a cluster that does not answer,
// wants a login or TLS, or refuses or leaves unanswered the demo's writes
// or reads is reported as Kafka's, in one line, before the demo has
// touched PostgreSQL (which need not be up for that) or has printed a
// line of progress.
func Kafka(ctx context.Context, cfg brewkit.Config, topics ...brewkit.Topic) (*kgo.Client, *kadm.Client, error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := check(ctx, cfg, cl, adm, topics); err != nil {
		cl.Close()
		return nil, nil, err
	}
	return cl, adm, nil
}

func check(ctx context.Context, cfg brewkit.Config, cl *kgo.Client, adm *kadm.Client, topics []brewkit.Topic) error {
	created, err := brewkit.EnsureTopics(ctx, adm, append(topics, CheckTopic)...)
	if err != nil {
		return err
	}
	if len(created) == 0 || created[len(created)-1] != CheckTopic.Name {
		// Another program may have created it a moment ago: its
		// partition may not be everywhere yet.
		wctx, cancel := context.WithTimeout(ctx, cfg.Bound())
		err := brewkit.WaitTopics(wctx, adm, CheckTopic.Name)
		cancel()
		if err != nil {
			return err
		}
	}
	r := &kgo.Record{Topic: CheckTopic.Name, Value: []byte("lecture 11: the cluster takes writes")}
	if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		return fmt.Errorf("writing to %s: %w", CheckTopic.Name, err)
	}
	to := kadm.ListedOffsets{CheckTopic.Name: {r.Partition: {Topic: CheckTopic.Name, Partition: r.Partition, Offset: r.Offset + 1}}}
	return brewkit.ReadTo(ctx, cfg, CheckTopic.Name, map[int32]int64{r.Partition: r.Offset}, to, 3*cfg.Bound(), func(*kgo.Record) {})
}

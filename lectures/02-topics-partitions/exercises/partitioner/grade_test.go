package partitioner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const hint = "Kafka's default partitioner hashes the key bytes with murmur2 (seed 0x9747b28c), " +
	"clears the sign bit (h & 0x7fffffff) and takes it modulo the partition count (lecture 02: how a key picks its partition)"

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	for _, partitions := range []int32{6, 7} {
		topic := env.FreshTopic(t, "ex-partitioner", partitions)
		cl := env.Client(t, kgo.DefaultProduceTopic(topic))
		var records []*kgo.Record
		for i := range 1000 {
			records = append(records, &kgo.Record{Key: fmt.Appendf(nil, "ord-%07d", i*7919%10_000_000), Value: []byte("{}")})
		}
		if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
			t.Fatalf("producing the orders: %v", err)
		}
		end, err := brewkit.EndOffsets(ctx, env.Admin(t), topic)
		if err != nil {
			t.Fatal(err)
		}
		stored := map[string]int32{}
		err = brewkit.ReadTo(ctx, env.Config, topic, nil, end, 30*time.Second, func(r *kgo.Record) {
			stored[string(r.Key)] = r.Partition
		})
		if err != nil {
			t.Fatalf("reading the orders back: %v", err)
		}
		if len(stored) != len(records) {
			t.Fatalf("read %d of %d orders back", len(stored), len(records))
		}
		wrong, first := 0, ""
		for _, r := range records {
			got, want := Partition(r.Key, int(partitions)), stored[string(r.Key)]
			if got < 0 || got >= int(partitions) {
				grade.Fail(t, "a partition is in [0, partitions): mind the sign of the hash",
					"Partition(%q, %d) = %d, outside [0, %d)", r.Key, partitions, got, partitions)
			}
			if int32(got) != want {
				if wrong == 0 {
					first = fmt.Sprintf("Partition(%q, %d) = %d, and the cluster stored it in partition %d", r.Key, partitions, got, want)
				}
				wrong++
			}
		}
		if wrong > 0 {
			grade.Fail(t, hint, "%s (%d of %d keys placed wrong on %d partitions)", first, wrong, len(records), partitions)
		}
	}
}

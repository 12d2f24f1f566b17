package brewtest

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// DescribedPartition is one partition as Kafka's kafka-topics --describe prints it.
type DescribedPartition struct {
	ID       int32
	Leader   int32 // -1 for "none"
	Replicas []int32
	ISR      []int32 // sorted
}

var describeLine = regexp.MustCompile(`Partition: (\d+)\s+Leader: (\S+)\s+Replicas: (\S*)\s+Isr: (\S*)`)

// KafkaTopicsDescribe runs Kafka's own `kafka-topics --describe --topic topic`
// on the stand that is up and returns its partitions in order.
func (e *Env) KafkaTopicsDescribe(t testing.TB, topic string) []DescribedPartition {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, err := e.Stand(t).Tool(ctx, "kafka-topics", "--describe", "--topic", topic)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kafka-topics --describe: %v\n%s", err, out)
	}
	var parts []DescribedPartition
	for _, m := range describeLine.FindAllStringSubmatch(string(out), -1) {
		id, _ := strconv.Atoi(m[1])
		leader := int32(-1)
		if n, err := strconv.Atoi(m[2]); err == nil {
			leader = int32(n)
		}
		parts = append(parts, DescribedPartition{ID: int32(id), Leader: leader, Replicas: ints(m[3]), ISR: slices.Sorted(slices.Values(ints(m[4])))})
	}
	if len(parts) == 0 {
		t.Fatalf("no partitions in kafka-topics output:\n%s", out)
	}
	return parts
}

func ints(s string) []int32 {
	var out []int32
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, int32(n))
		}
	}
	return out
}

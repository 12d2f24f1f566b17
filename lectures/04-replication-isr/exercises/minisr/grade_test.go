package minisr

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const (
	createHint   = "create the topic with the admin client you are given (kadm.Client.CreateTopic), with its partitions, replication factor and configs"
	oneDownHint  = "acks=all is refused once a partition's ISR is smaller than min.insync.replicas: with one node down, the replicas left in sync must still be enough (lecture 04: ISR and min.insync.replicas)"
	twoDownHint  = "with two nodes down at most one copy of a partition is left in sync: min.insync.replicas must make the broker refuse that, not write it (lecture 04: NOT_ENOUGH_REPLICAS)"
	sourceHint   = "min.insync.replicas is a topic config: set it in the configs the topic is created with, or the topic takes whatever its cluster's brokers default to"
	acceptedHint = "with every node up an acks=all payment must be written: check the topic's configs"
)

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.RealKafka)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := env.Admin(t)

	topic := "brew.test.ex-minisr-" + strconv.Itoa(rand.IntN(1e6))
	t.Cleanup(func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer dcancel()
		adm.DeleteTopic(dctx, topic) //nolint:errcheck // best effort; it may not exist
	})
	grade.Failed(t, create(ctx, adm, topic), createHint, "CreatePayments")

	// A broker learns of a new topic a moment after the create returns.
	wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
	err := brewkit.WaitTopics(wctx, adm, topic)
	wcancel()
	if err != nil {
		grade.Fail(t, createHint, "CreatePayments(%q) returned, and within 15 s the cluster had no topic %s with every partition in place", topic, topic)
	}
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		t.Fatalf("reading the metadata of %s: %v", topic, err)
	}
	parts := td[topic].Partitions.Sorted()
	if len(parts) != 6 {
		grade.Fail(t, createHint, "the topic has %d partitions; Brew's payments topic has 6", len(parts))
	}
	minISR, source := minInsync(ctx, t, adm, topic)

	// Every partition takes an acks=all payment with all nodes up.
	prod := env.Client(t, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordRetries(3), kgo.RecordDeliveryTimeout(15*time.Second))
	for _, p := range parts {
		r := &kgo.Record{Topic: topic, Partition: p.Partition, Key: []byte(brewkit.OrderID(int64(p.Partition + 1))), Value: []byte(`{"type":"PaymentReceived"}`)}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			grade.Fail(t, acceptedHint, "with every node up, an acks=all payment to partition %d was refused: %v", p.Partition, err)
		}
	}

	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		t.Fatalf("listing the nodes: %v", err)
	}
	nodes := brokers.NodeIDs()
	slices.Sort(nodes)
	var downs [][]int32
	for i, a := range nodes {
		downs = append(downs, []int32{a})
		for _, b := range nodes[i+1:] {
			downs = append(downs, []int32{a, b})
		}
	}
	for _, down := range downs {
		for _, p := range parts {
			isr := slices.DeleteFunc(slices.Clone(p.Replicas), func(r int32) bool { return slices.Contains(down, r) })
			slices.Sort(isr)
			// The broker counts min.insync.replicas up to the replication factor.
			need := min(minISR, len(p.Replicas))
			accepted := len(isr) > 0 && len(isr) >= need
			what := fmt.Sprintf("with %s down, partition %d (replicas %v) keeps ISR %v", nodesText(down), p.Partition, p.Replicas, isr)
			switch {
			case len(down) == 1 && len(isr) == 0:
				grade.Fail(t, oneDownHint, "%s: no replica is left to lead it, and payments to it are refused", what)
			case len(down) == 1 && !accepted:
				grade.Fail(t, oneDownHint, "%s: %d in sync against min.insync.replicas=%d%s, so acks=all payments get NOT_ENOUGH_REPLICAS",
					what, len(isr), minISR, capped(minISR, len(p.Replicas)))
			case len(down) == 2 && accepted:
				grade.Fail(t, twoDownHint, "%s: %d in sync against min.insync.replicas=%d%s, so acks=all payments are acknowledged on %d cop%s",
					what, len(isr), minISR, capped(minISR, len(p.Replicas)), len(isr), plural(len(isr), "y", "ies"))
			}
		}
	}
	if source != kmsg.ConfigSourceDynamicTopicConfig {
		grade.Fail(t, sourceHint, "the topic has no min.insync.replicas of its own: its %d comes from %s, and on a cluster whose default is 1 acks=all payments would be written on a single copy",
			minISR, source)
	}
}

// create calls CreatePayments, bounded: a function that ignores its context
// still fails the grade instead of hanging it.
func create(ctx context.Context, adm *kadm.Client, topic string) error {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- CreatePayments(cctx, adm, topic) }()
	select {
	case err := <-done:
		return err
	case <-time.After(35 * time.Second):
		return fmt.Errorf("did not return within 35 s")
	}
}

// minInsync returns the min.insync.replicas the cluster applies to topic and
// where that value comes from.
func minInsync(ctx context.Context, t *testing.T, adm *kadm.Client, topic string) (int, kmsg.ConfigSource) {
	t.Helper()
	rc, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatalf("reading the configs of %s: %v", topic, err)
	}
	r, err := rc.On(topic, nil)
	if err != nil {
		t.Fatalf("reading the configs of %s: %v", topic, err)
	}
	for _, c := range r.Configs {
		if c.Key == "min.insync.replicas" {
			n, err := strconv.Atoi(c.MaybeValue())
			if err != nil {
				t.Fatalf("min.insync.replicas of %s is %q: %v", topic, c.MaybeValue(), err)
			}
			return n, c.Source
		}
	}
	t.Fatalf("the cluster did not say the min.insync.replicas of %s", topic)
	return 0, 0
}

func nodesText(down []int32) string {
	if len(down) == 1 {
		return fmt.Sprintf("node %d", down[0])
	}
	return fmt.Sprintf("nodes %d and %d", down[0], down[1])
}

// capped says when the broker applies fewer than min.insync.replicas: it
// counts at most the partition's replicas.
func capped(minISR, replicas int) string {
	if minISR > replicas {
		return fmt.Sprintf(" (which the broker counts as %d, the replication factor)", replicas)
	}
	return ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

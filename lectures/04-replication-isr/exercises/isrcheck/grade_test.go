package isrcheck

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const (
	callHint    = "read the partitions with kadm's ListTopics and the topics' configs with DescribeTopicConfigs"
	healthyHint = "with every node up every replica is in sync: a partition is under-replicated only when its ISR is shorter than its replica list"
	urHint      = "under-replicated means the ISR is shorter than the replica list (lecture 04: ISR, whom to trust)"
	minHint     = "acks=all is refused when the ISR is shorter than the topic's own min.insync.replicas, which differs from topic to topic; a missing replica alone does not refuse it (lecture 04: min.insync.replicas)"
)

// TestGradeAlone stops a node (its name says so: it holds the stand alone).
func TestGradeAlone(t *testing.T) {
	env := grade.Start(t, grade.RealKafka)
	nodes := env.NodeControl(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	adm := env.Admin(t)

	// The node to stop: not the active controller, so the quorum stays put.
	down, others := int32(2), []int32{1, 3}
	if q, err := brewkit.DescribeQuorum(ctx, env.Client(t)); err == nil && q.LeaderID == 2 {
		down, others = 3, []int32{1, 2}
	}
	a, b, d := others[0], others[1], down
	run := strconv.Itoa(rand.IntN(1e6))
	topics := []struct {
		name    string
		assign  [][]int32 // nil: three replicas where the cluster puts them
		parts   int32
		configs map[string]string
	}{
		{name: "orders", parts: 3}, // the broker's min.insync.replicas (2 on the stand)
		{name: "payments", parts: 2, configs: map[string]string{"min.insync.replicas": "3"}},
		{name: "kitchen", assign: [][]int32{{a, b}, {a, d}, {d, b}}},
		{name: "shipments", assign: [][]int32{{a, b}, {d, a}}, configs: map[string]string{"min.insync.replicas": "1"}},
	}
	var names []string
	for _, tp := range topics {
		name := "brew.test.ex-isrcheck-" + tp.name + "-" + run
		create(ctx, t, env.Client(t), adm, name, tp.parts, tp.assign, tp.configs)
		names = append(names, name)
	}
	if err := brewkit.WaitTopics(ctx, adm, names...); err != nil {
		t.Fatal(err)
	}

	got := check(ctx, t, adm, names)
	if len(got.UnderReplicated) > 0 || len(got.UnderMinISR) > 0 {
		grade.Fail(t, healthyHint, "with every node up and every ISR full, Check reported under-replicated %s and under min ISR %s",
			list(got.UnderReplicated), list(got.UnderMinISR))
	}

	t.Logf("stopping node %d", d)
	if err := nodes.StopNode(ctx, int(d), false); err != nil {
		t.Fatalf("stopping node %d: %v", d, err)
	}
	// The controller drops a stopped node from every ISR; wait until the
	// metadata shows it, and the new leaders.
	var want Report
	err := brewkit.WaitFor(ctx, time.Minute, 250*time.Millisecond, func() bool {
		var settled bool
		want.UnderReplicated, settled = underReplicated(ctx, adm, names, d)
		return settled
	})
	if err != nil {
		t.Fatalf("the ISRs did not drop node %d within a minute: %v", d, err)
	}
	want.UnderMinISR = refused(ctx, t, env.Client(t, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordRetries(2), kgo.RecordDeliveryTimeout(10*time.Second)), adm, names)

	got = check(ctx, t, adm, names)
	compare(t, d, "under-replicated", urHint, got.UnderReplicated, want.UnderReplicated)
	compare(t, d, "under min ISR", minHint, got.UnderMinISR, want.UnderMinISR)
}

// create makes one topic, with the cluster's placement (three replicas) or
// with assign, and deletes it when the test ends.
func create(ctx context.Context, t *testing.T, cl *kgo.Client, adm *kadm.Client, name string, parts int32, assign [][]int32, configs map[string]string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30_000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, parts, 3
	if assign != nil {
		rt.NumPartitions, rt.ReplicationFactor = -1, -1
		for p, replicas := range assign {
			ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			ra.Partition, ra.Replicas = int32(p), replicas
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
		}
	}
	configs = mapsWith(configs, "retention.ms", "3600000")
	for k, v := range configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
	}
	if err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
	t.Cleanup(func() {
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		adm.DeleteTopic(dctx, name) //nolint:errcheck // best effort
	})
}

func mapsWith(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for mk, mv := range m {
		out[mk] = mv
	}
	return out
}

// check calls Check, bounded: a function that ignores its context still
// fails the grade instead of hanging it.
func check(ctx context.Context, t *testing.T, adm *kadm.Client, names []string) Report {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	type answer struct {
		r   Report
		err error
	}
	done := make(chan answer, 1)
	go func() {
		r, err := Check(cctx, adm, names...)
		done <- answer{r, err}
	}()
	select {
	case a := <-done:
		grade.Failed(t, a.err, callHint, "Check returned an error")
		return a.r
	case <-time.After(25 * time.Second):
		grade.Fail(t, callHint, "Check did not return within 25 s")
		return Report{}
	}
}

// underReplicated reads the partitions whose ISR is shorter than their
// replicas, and whether the cluster has settled after node down stopped:
// no partition leads on it or keeps it in sync.
func underReplicated(ctx context.Context, adm *kadm.Client, names []string, down int32) ([]Partition, bool) {
	td, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return nil, false
	}
	var out []Partition
	for _, name := range names {
		d, ok := td[name]
		if !ok || d.Err != nil {
			return nil, false
		}
		for _, p := range d.Partitions.Sorted() {
			if p.Leader == down || p.Leader < 0 || slices.Contains(p.ISR, down) {
				return nil, false
			}
			if len(p.ISR) < len(p.Replicas) {
				out = append(out, Partition{name, p.Partition})
			}
		}
	}
	return out, true
}

// refused writes one acks=all record to every partition and returns those
// the cluster refused with NOT_ENOUGH_REPLICAS.
func refused(ctx context.Context, t *testing.T, prod *kgo.Client, adm *kadm.Client, names []string) []Partition {
	t.Helper()
	td, err := adm.ListTopics(ctx, names...)
	if err != nil {
		t.Fatalf("reading the metadata: %v", err)
	}
	var out []Partition
	for _, name := range names {
		for _, p := range td[name].Partitions.Sorted() {
			err := prod.ProduceSync(ctx, &kgo.Record{Topic: name, Partition: p.Partition, Value: []byte(`{"type":"OrderPlaced"}`)}).FirstErr()
			switch {
			case err == nil:
			case errors.Is(err, kerr.NotEnoughReplicas):
				out = append(out, Partition{name, p.Partition})
			default:
				t.Fatalf("an acks=all write to %s partition %d: %v", name, p.Partition, err)
			}
		}
	}
	return out
}

// compare fails the grade when Check's list differs from the cluster's.
func compare(t *testing.T, down int32, what, hint string, got, want []Partition) {
	t.Helper()
	sortParts(got)
	sortParts(want)
	got = slices.Compact(got)
	var missing, extra []Partition
	for _, p := range want {
		if !slices.Contains(got, p) {
			missing = append(missing, p)
		}
	}
	for _, p := range got {
		if !slices.Contains(want, p) {
			extra = append(extra, p)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return
	}
	var said []string
	switch {
	case len(got) == 0:
		said = append(said, "listed none")
	case len(missing) > 0:
		said = append(said, fmt.Sprintf("missed %s", list(missing)))
	}
	if len(extra) > 0 {
		said = append(said, fmt.Sprintf("listed %s, which %s not", list(extra), plural(len(extra), "is", "are")))
	}
	grade.Fail(t, hint, "with node %d stopped, Check's %s partitions %s; the cluster's are %s", down, what, strings.Join(said, " and "), list(want))
}

func sortParts(ps []Partition) {
	slices.SortFunc(ps, func(x, y Partition) int {
		return cmp.Or(strings.Compare(x.Topic, y.Topic), cmp.Compare(x.Partition, y.Partition))
	})
}

// list names partitions the way Kafka's tools do: topic-partition.
func list(ps []Partition) string {
	if len(ps) == 0 {
		return "none"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprintf("%s-%d", strings.TrimPrefix(p.Topic, "brew.test.ex-isrcheck-"), p.Partition)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

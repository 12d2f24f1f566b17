// Package movecheck is what the graders of lecture 15's exercises (spread,
// drain) share: both judge a target replica assignment a student's function
// returns, and on real Kafka apply it to a topic of their own under a witness.
//
// A topic's assignment is a map from partition to its replicas, the
// preferred leader first. The property checks return "" when the target has
// the property, and otherwise one line that names the partition and what it
// lacks, which the grader reports with its own hint (grade.Fail). The steps
// on a cluster (CreateTopicOn, StartWitness, Apply) fail the test themselves.
package movecheck

import (
	"context"
	"errors"
	"fmt"
	"maps"
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

	"github.com/brew-course/kafka/lectures/15-operations/witness"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/grade"

	"github.com/brew-course/kafka/lectures/15-operations/scaleout"
)

// The hints for what the cluster, not the target, did wrong.
const (
	HintCluster = "the target passed every check, and the cluster did not end as it says: look at what the message reports " +
		"(a reassignment the cluster could not complete, a node that went away)"
	HintWitness = "a reassignment that keeps the replication factor never loses or duplicates an acknowledged order: " +
		"if the witness counted some, the cluster went through a fault while it ran; check again"
)

// SamePartitions checks that target names every partition of current, and
// no other.
func SamePartitions(what string, current, target map[int32][]int32) string {
	for _, p := range slices.Sorted(maps.Keys(current)) {
		if _, ok := target[p]; !ok {
			return fmt.Sprintf("%s returned no partition %d: %s", what, p, Show(target))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(target)) {
		if _, ok := current[p]; !ok {
			return fmt.Sprintf("%s returned partition %d, which the topic does not have: %s", what, p, Show(target))
		}
	}
	return ""
}

// SameRF checks that partition p, whose replicas were was, keeps as many
// replicas in is.
func SameRF(what string, p int32, was, is []int32) string {
	if len(is) != len(was) {
		return fmt.Sprintf("%s: partition %d has %s, %v, and had %d, %v", what, p, Replicas(len(is)), is, len(was), was)
	}
	return ""
}

// NoNodeTwice checks that partition p's replicas is name no node twice.
func NoNodeTwice(what string, p int32, was, is []int32) string {
	for i, r := range is {
		if slices.Contains(is[i+1:], r) {
			return fmt.Sprintf("%s: partition %d's replicas %v name node %d twice (it had %v)", what, p, is, r, was)
		}
	}
	return ""
}

// Balanced checks that the nodes of load (replicas per node, as target
// places them) end within one replica of each other.
func Balanced(what string, load map[int32]int, target map[int32][]int32) string {
	nodes := slices.Sorted(maps.Keys(load))
	most := slices.MaxFunc(nodes, func(a, b int32) int { return load[a] - load[b] })
	least := slices.MinFunc(nodes, func(a, b int32) int { return load[a] - load[b] })
	if load[most]-load[least] > 1 {
		return fmt.Sprintf("%s leaves node %d with %d replicas and node %d with %d (replicas per node: %s): %s",
			what, most, load[most], least, load[least], loads(load), Show(target))
	}
	return ""
}

// RoundRobin is an assignment of partitions partitions with replicas
// replicas each on nodes 1..nodes, dealt in turn: partition p's replicas are
// nodes 1+p%nodes, 1+(p+1)%nodes, ..., so every node leads as many
// partitions as it can and holds as many replicas.
func RoundRobin(partitions, replicas, nodes int32) map[int32][]int32 {
	a := map[int32][]int32{}
	for p := range partitions {
		for i := range replicas {
			a[p] = append(a[p], 1+(p+i)%nodes)
		}
	}
	return a
}

// Replicas is "1 replica", "2 replicas", ...
func Replicas(n int) string {
	if n == 1 {
		return "1 replica"
	}
	return fmt.Sprintf("%d replicas", n)
}

// Clone is a copy of a that shares no slice with it.
func Clone(a map[int32][]int32) map[int32][]int32 {
	out := make(map[int32][]int32, len(a))
	for p, rs := range a {
		out[p] = slices.Clone(rs)
	}
	return out
}

// Equal reports whether a and b have the same partitions with the same
// replicas in the same order.
func Equal(a, b map[int32][]int32) bool {
	return maps.EqualFunc(a, b, func(x, y []int32) bool { return slices.Equal(x, y) })
}

// Show is an assignment as "0:[1 2] 1:[1 2] ...".
func Show(a map[int32][]int32) string {
	if a == nil {
		return "nil"
	}
	var b strings.Builder
	for i, p := range slices.Sorted(maps.Keys(a)) {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%d:%v", p, a[p])
	}
	return b.String()
}

func loads(load map[int32]int) string {
	var s []string
	for _, n := range slices.Sorted(maps.Keys(load)) {
		s = append(s, fmt.Sprintf("node %d: %d", n, load[n]))
	}
	return strings.Join(s, ", ")
}

// LogSimulated says, on a simulation, that only the targets' properties
// were graded.
func LogSimulated(t *testing.T, env *brewtest.Env) {
	t.Helper()
	on := "an in-process simulation (kfake)"
	if env.Sim == nil {
		on = "the embedded simulation at " + env.Config.Bootstrap()
	}
	t.Logf("grade: ON %s: the targets' properties only, a simulation moves no replica; on a real stand (make up) the grader also applies the target", on)
}

// NeedNodes fails the test unless the cluster has every one of nodes.
func NeedNodes(ctx context.Context, t *testing.T, cl *kgo.Client, nodes ...int32) {
	t.Helper()
	brokers, err := kadm.NewClient(cl).ListBrokers(ctx)
	if err != nil {
		t.Fatalf("listing the brokers: %v", err)
	}
	for _, n := range nodes {
		if !slices.Contains(brokers.NodeIDs(), n) {
			t.Fatalf("the cluster has no node %d (brokers %v): the grader needs the course stand's nodes 1-3 up", n, brokers.NodeIDs())
		}
	}
}

// CreateTopicOn makes a fresh topic named after prefix with its replicas
// where a says (CreateTopics with a replica assignment), deleted when the
// test ends, and writes 1 MiB of orders-sized records to it, so the moved
// replicas have something to copy. It returns the topic and its assignment
// as the cluster reports it, which must be a.
func CreateTopicOn(ctx context.Context, t *testing.T, env *brewtest.Env, prefix string, a map[int32][]int32) (string, map[int32][]int32) {
	t.Helper()
	cl := env.Client(t)
	topic := create(ctx, t, cl, prefix, a)
	fill(ctx, t, env, topic)
	current, _, _ := Describe(ctx, cl, topic)
	if current == nil {
		t.Fatalf("describing %s failed", topic)
	}
	if !Equal(current, a) {
		t.Fatalf("created %s on %s and the cluster has %s", topic, Show(a), Show(current))
	}
	return topic, current
}

func create(ctx context.Context, t *testing.T, cl *kgo.Client, prefix string, a map[int32][]int32) string {
	t.Helper()
	adm := kadm.NewClient(cl)
	for range 5 {
		name := "brew.test." + prefix + "-" + strconv.Itoa(rand.IntN(1e6))
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 30_000
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, -1, -1
		for _, p := range slices.Sorted(maps.Keys(a)) {
			ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			ra.Partition, ra.Replicas = p, a[p]
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
		}
		hour := strconv.FormatInt(time.Hour.Milliseconds(), 10)
		rc := kmsg.NewCreateTopicsRequestTopicConfig()
		rc.Name, rc.Value = "retention.ms", &hour
		rt.Configs = append(rt.Configs, rc)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("creating %s: %v", name, err)
		}
		err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
		if errors.Is(err, kerr.TopicAlreadyExists) {
			continue
		}
		if err != nil {
			t.Fatalf("creating %s on %s: %v", name, Show(a), err)
		}
		t.Cleanup(func() {
			dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			adm.DeleteTopic(dctx, name) //nolint:errcheck // best effort
		})
		if err := brewkit.WaitTopics(ctx, adm, name); err != nil {
			t.Fatal(err)
		}
		return name
	}
	t.Fatal("creating a fresh topic: five names taken")
	return ""
}

func fill(ctx context.Context, t *testing.T, env *brewtest.Env, topic string) {
	t.Helper()
	cl := env.Client(t)
	value := []byte(strings.Repeat("x", 1024))
	var recs []*kgo.Record
	for i := range 1024 {
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(brewkit.OrderID(int64(i + 1))), Value: value})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("writing to %s: %v", topic, err)
	}
}

// Witness is a witness (package witness of this lecture) writing orders to the topic
// while it moves and reading them back.
type Witness struct {
	w       *witness.Witness
	topic   string
	stopped bool
}

// StartWitness starts a witness on topic at 100 orders a second; it is
// stopped when the test ends, if Stop was not called.
func StartWitness(ctx context.Context, t *testing.T, env *brewtest.Env, topic string) *Witness {
	t.Helper()
	w, err := witness.Start(ctx, env.Config, topic, 100)
	if err != nil {
		t.Fatal(err)
	}
	wt := &Witness{w: w, topic: topic}
	t.Cleanup(func() {
		if !wt.stopped {
			w.Stop(5 * time.Second)
		}
	})
	return wt
}

// Stop stops the witness and reports what it saw; it fails the test if the
// witness wrote nothing, since then it saw nothing either.
func (wt *Witness) Stop(t *testing.T) witness.Report {
	t.Helper()
	rep := wt.w.Stop(time.Minute)
	wt.stopped = true
	if rep.Acked == 0 {
		t.Fatalf("the witness wrote nothing to %s: %s", wt.topic, rep)
	}
	return rep
}

// Apply reassigns topic's partitions to target (AlterPartitionAssignments),
// waits up to 2 minutes until Kafka lists none of them as moving
// (scaleout.Reassigning), then up to 30 s until the topic's replicas are
// target and every ISR is full. It fails the grade with HintCluster on the
// first of these the cluster does not do, and returns when the reassignment
// was accepted and the topic's replicas after it.
func Apply(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, target map[int32][]int32) (time.Time, map[int32][]int32) {
	t.Helper()
	var req kadm.AlterPartitionAssignmentsReq
	for p, rs := range target {
		req.Assign(topic, p, rs)
	}
	resp, err := kadm.NewClient(cl).AlterPartitionAssignments(ctx, req)
	if err == nil {
		err = resp.Error()
	}
	grade.Failed(t, err, HintCluster, fmt.Sprintf("reassigning %s to %s", topic, Show(target)))
	start := time.Now()
	var moving []int32
	if brewkit.WaitFor(ctx, 2*time.Minute, 250*time.Millisecond, func() bool {
		m, err := scaleout.Reassigning(ctx, cl)
		moving = m[topic]
		return err == nil && len(moving) == 0
	}) != nil {
		grade.Fail(t, HintCluster, "the reassignment of %s to %s was not complete within 2 minutes: partitions %v still moving", topic, Show(target), moving)
	}
	var after map[int32][]int32
	var notFull []string
	brewkit.WaitFor(ctx, 30*time.Second, 250*time.Millisecond, func() bool { //nolint:errcheck // judged below
		after, _, notFull = Describe(ctx, cl, topic)
		return Equal(after, target) && len(notFull) == 0
	})
	if !Equal(after, target) {
		grade.Fail(t, HintCluster, "Kafka called the reassignment complete after %s, and %s's replicas are %s, not the target %s",
			time.Since(start).Round(100*time.Millisecond), topic, Show(after), Show(target))
	}
	if len(notFull) > 0 {
		grade.Fail(t, HintCluster, "the replicas are the target, and 30 s later some ISRs are not full: %s", strings.Join(notFull, "; "))
	}
	return start, after
}

// Describe is the topic's replicas, leaders, and the partitions whose ISR
// is not all their replicas; nil replicas if it could not be described.
func Describe(ctx context.Context, cl *kgo.Client, topic string) (map[int32][]int32, map[int32]int32, []string) {
	td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err == nil {
		err = td.Error()
	}
	if err != nil {
		return nil, nil, []string{err.Error()}
	}
	a, leaders := map[int32][]int32{}, map[int32]int32{}
	var notFull []string
	for _, pd := range td[topic].Partitions.Sorted() {
		a[pd.Partition], leaders[pd.Partition] = pd.Replicas, pd.Leader
		if !slices.Equal(slices.Sorted(slices.Values(pd.Replicas)), slices.Sorted(slices.Values(pd.ISR))) {
			notFull = append(notFull, fmt.Sprintf("partition %d: replicas %v, ISR %v", pd.Partition, pd.Replicas, pd.ISR))
		}
	}
	return a, leaders, notFull
}

package drain

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

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
	"github.com/brew-course/kafka/pkg/brewkit/witness"

	"github.com/brew-course/kafka/lectures/15-operations/scaleout"
)

// leaving is the node the grader drains: the course stand's third node.
const leaving = 3

const (
	hintPartitions = "return a target for every partition of current, and for no other: the reassignment names each partition of the topic " +
		"(lecture 15: a fourth node and moving partitions)"
	hintMutate = "build the target in new slices (slices.Clone): current is what the topic has now, which the operator needs to roll back to"
	hintRF     = "replace each of the node's replicas by another node's, never just drop it: Kafka does not re-replicate what a reassignment leaves out, " +
		"and the partition would keep one copy fewer for good"
	hintDup = "a node holds at most one replica of a partition: pick a node the partition does not have yet " +
		"(Kafka refuses a replica list that names a node twice)"
	hintLeft  = "every replica on the drained node must move: the node is about to leave, and a replica left on it is a copy lost when it goes"
	hintPlace = "put the new replica where the drained one was, and keep the partition's other replicas where they are: the first replica is the " +
		"preferred leader, and a partition the drained node did not lead should keep its leader (lecture 15: a fourth node and moving partitions)"
	hintOnto = "drain onto the assignment's other nodes, the ones that hold the topic's replicas now: a node outside them may be another " +
		"that is leaving, or not a broker at all"
	hintBalance = "give each drained replica to the node that holds the fewest replicas at that moment (among those the partition does not have), " +
		"not to the first free node you meet: the nodes that remain must end within one replica of each other"
	hintCluster = "the target passed every check, and the cluster did not end as it says: look at what the message reports " +
		"(a reassignment the cluster could not complete, a node that went away)"
	hintWitness = "a reassignment that keeps the replication factor never loses or duplicates an acknowledged order: " +
		"if the witness counted some, the cluster went through a fault while it ran; check again"
)

// onThree is the grader's topic: 6 partitions with two replicas spread
// over nodes 1-3, each node leading two.
func onThree() map[int32][]int32 {
	a := map[int32][]int32{}
	for p := range int32(6) {
		a[p] = []int32{1 + p%3, 1 + (p+1)%3}
	}
	return a
}

// pure is a case checked without a cluster: the target's properties only.
type pure struct {
	what    string
	current map[int32][]int32
	node    int32
}

// more are the grader's other assignments, where a drained replica has
// more than one place to go: two replicas on four nodes, three on five.
func more() []pure {
	eight := map[int32][]int32{}
	for p := range int32(8) {
		eight[p] = []int32{1 + p%4, 1 + (p+1)%4}
	}
	ten := map[int32][]int32{}
	for p := range int32(10) {
		ten[p] = []int32{1 + p%5, 1 + (p+1)%5, 1 + (p+2)%5}
	}
	return []pure{
		{"8 partitions, 2 replicas on nodes 1-4", eight, 2},
		{"10 partitions, 3 replicas on nodes 1-5", ten, 1},
	}
}

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	if env.Simulated {
		// kfake accepts a reassignment and moves nothing: the properties
		// of the targets are all a simulation can grade.
		for _, c := range append([]pure{{"6 partitions, 2 replicas on nodes 1-3", onThree(), leaving}}, more()...) {
			check(t, c, call(t, c))
		}
		on := "an in-process simulation (kfake)"
		if env.Sim == nil {
			on = "the embedded simulation at " + env.Config.Bootstrap()
		}
		t.Logf("grade: ON %s: the targets' properties only, a simulation moves no replica; on a real stand (make up) the grader also applies the target", on)
		return
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cl := env.Client(t)
	adm := kadm.NewClient(cl)
	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		t.Fatalf("listing the brokers: %v", err)
	}
	for _, n := range []int32{1, 2, leaving} {
		if !slices.Contains(brokers.NodeIDs(), n) {
			t.Fatalf("the cluster has no node %d (brokers %v): the grader needs the course stand's nodes 1-3 up", n, brokers.NodeIDs())
		}
	}

	topic := create(ctx, t, cl, adm, "ex-drain", onThree())
	fill(ctx, t, env, topic)
	current := assignment(ctx, t, adm, topic)
	if !equal(current, onThree()) {
		t.Fatalf("created %s on %s and the cluster has %s", topic, show(onThree()), show(current))
	}
	w, err := witness.Start(ctx, env.Config, topic, 100)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			w.Stop(5 * time.Second)
		}
	})

	c := pure{"topic " + topic, current, leaving}
	target := call(t, c)
	check(t, c, target)
	for _, c := range more() {
		check(t, c, call(t, c))
	}

	// The reassignment, as Drain asked for it.
	var req kadm.AlterPartitionAssignmentsReq
	for p, rs := range target {
		req.Assign(topic, p, rs)
	}
	resp, err := adm.AlterPartitionAssignments(ctx, req)
	if err == nil {
		err = resp.Error()
	}
	grade.Failed(t, err, hintCluster, fmt.Sprintf("reassigning %s to %s", topic, show(target)))
	start := time.Now()
	var moving []int32
	if brewkit.WaitFor(ctx, 2*time.Minute, 250*time.Millisecond, func() bool {
		m, err := scaleout.Reassigning(ctx, cl)
		moving = m[topic]
		return err == nil && len(moving) == 0
	}) != nil {
		grade.Fail(t, hintCluster, "the reassignment of %s to %s was not complete within 2 minutes: partitions %v still moving", topic, show(target), moving)
	}
	var after map[int32][]int32
	var notFull []string
	brewkit.WaitFor(ctx, 30*time.Second, 250*time.Millisecond, func() bool { //nolint:errcheck // judged below
		after, _, notFull = describe(ctx, adm, topic)
		return equal(after, target) && len(notFull) == 0
	})
	if !equal(after, target) {
		grade.Fail(t, hintCluster, "Kafka called the reassignment complete after %s, and %s's replicas are %s, not the target %s",
			time.Since(start).Round(100*time.Millisecond), topic, show(after), show(target))
	}
	for _, p := range slices.Sorted(maps.Keys(after)) {
		if slices.Contains(after[p], leaving) {
			grade.Fail(t, hintLeft, "after the reassignment partition %d of %s still has a replica on node %d: %v", p, topic, leaving, after[p])
		}
	}
	if len(notFull) > 0 {
		grade.Fail(t, hintCluster, "the replicas are the target, and 30 s later some ISRs are not full: %s", strings.Join(notFull, "; "))
	}

	rep := w.Stop(time.Minute)
	stopped = true
	if rep.Acked == 0 {
		t.Fatalf("the witness wrote nothing to %s: %s", topic, rep)
	}
	if !rep.OK() {
		grade.Fail(t, hintWitness, "while %s moved off node %d, the witness %s", topic, leaving, rep)
	}
	t.Logf("%s moved to %s in %s, node %d holds none of it; witness: %s",
		topic, show(target), time.Since(start).Round(100*time.Millisecond), leaving, rep)
}

// call runs Drain on a copy of c.current, and fails the grade if Drain
// changed it.
func call(t *testing.T, c pure) map[int32][]int32 {
	t.Helper()
	in := clone(c.current)
	target := Drain(in, c.node)
	if !equal(in, c.current) {
		grade.Fail(t, hintMutate, "%s: Drain(current, %d) changed current, %s, to %s", c.what, c.node, show(c.current), show(in))
	}
	return target
}

// check holds a target to every property the task names, and fails the
// grade on the first it lacks.
func check(t *testing.T, c pure, target map[int32][]int32) {
	t.Helper()
	cur, n := c.current, c.node
	what := fmt.Sprintf("%s (%s): Drain(current, %d)", c.what, show(cur), n)
	others := map[int32]bool{}
	for _, rs := range cur {
		for _, r := range rs {
			if r != n {
				others[r] = true
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(cur)) {
		if _, ok := target[p]; !ok {
			grade.Fail(t, hintPartitions, "%s returned no partition %d: %s", what, p, show(target))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(target)) {
		if _, ok := cur[p]; !ok {
			grade.Fail(t, hintPartitions, "%s returned partition %d, which the topic does not have: %s", what, p, show(target))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(cur)) {
		was, is := cur[p], target[p]
		if len(is) != len(was) {
			grade.Fail(t, hintRF, "%s: partition %d has %s, %v, and had %d, %v", what, p, replicas(len(is)), is, len(was), was)
		}
		for i, r := range is {
			if slices.Contains(is[i+1:], r) {
				grade.Fail(t, hintDup, "%s: partition %d's replicas %v name node %d twice (it had %v)", what, p, is, r, was)
			}
		}
		if slices.Contains(is, n) {
			grade.Fail(t, hintLeft, "%s: partition %d still has a replica on node %d: %v", what, p, n, is)
		}
		for i, r := range was {
			switch {
			case r != n && is[i] != r:
				grade.Fail(t, hintPlace, "%s: partition %d goes from %v to %v: its %s replica was node %d, which stays, and is node %d now",
					what, p, was, is, ordinal(i), r, is[i])
			case r == n && !others[is[i]]:
				grade.Fail(t, hintOnto, "%s: partition %d goes from %v to %v: node %d holds no replica of the topic; the other nodes are %v",
					what, p, was, is, is[i], slices.Sorted(maps.Keys(others)))
			}
		}
	}

	load := map[int32]int{}
	for r := range others {
		load[r] = 0
	}
	for _, rs := range target {
		for _, r := range rs {
			load[r]++
		}
	}
	nodes := slices.Sorted(maps.Keys(load))
	most := slices.MaxFunc(nodes, func(a, b int32) int { return load[a] - load[b] })
	least := slices.MinFunc(nodes, func(a, b int32) int { return load[a] - load[b] })
	if load[most]-load[least] > 1 {
		grade.Fail(t, hintBalance, "%s leaves node %d with %d replicas and node %d with %d (replicas per node: %s): %s",
			what, most, load[most], least, load[least], loads(load), show(target))
	}
}

func replicas(n int) string {
	if n == 1 {
		return "1 replica"
	}
	return fmt.Sprintf("%d replicas", n)
}

func ordinal(i int) string {
	if i < 5 {
		return []string{"first", "second", "third", "fourth", "fifth"}[i]
	}
	return fmt.Sprintf("#%d", i+1)
}

func clone(a map[int32][]int32) map[int32][]int32 {
	out := make(map[int32][]int32, len(a))
	for p, rs := range a {
		out[p] = slices.Clone(rs)
	}
	return out
}

func equal(a, b map[int32][]int32) bool {
	return maps.EqualFunc(a, b, func(x, y []int32) bool { return slices.Equal(x, y) })
}

// show is an assignment as "0:[1 2] 1:[1 2] ...".
func show(a map[int32][]int32) string {
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

// create makes a fresh topic with its replicas where a says (CreateTopics
// with a replica assignment), deleted when the test ends.
func create(ctx context.Context, t *testing.T, cl *kgo.Client, adm *kadm.Client, prefix string, a map[int32][]int32) string {
	t.Helper()
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
			t.Fatalf("creating %s on %s: %v", name, show(a), err)
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

// fill writes 1 MiB of orders-sized records to the topic, so the moved
// replicas have something to copy.
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

// assignment is the topic's replicas as the cluster has them now.
func assignment(ctx context.Context, t *testing.T, adm *kadm.Client, topic string) map[int32][]int32 {
	t.Helper()
	a, _, _ := describe(ctx, adm, topic)
	if a == nil {
		t.Fatalf("describing %s failed", topic)
	}
	return a
}

// describe is the topic's replicas, leaders, and the partitions whose ISR
// is not all their replicas; nil replicas if it could not be described.
func describe(ctx context.Context, adm *kadm.Client, topic string) (map[int32][]int32, map[int32]int32, []string) {
	td, err := adm.ListTopics(ctx, topic)
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

// elect asks for the preferred leaders of the topic's partitions, named
// one by one (kadm asks for no partition of a topic given alone).
func elect(ctx context.Context, adm *kadm.Client, topic string, parts []int32) {
	set := kadm.TopicsSet{}
	set.Add(topic, parts...)
	adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set) //nolint:errcheck // the leaders are read back
}

package spread

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

// joining is the node the grader's topic is spread onto: the course
// stand's third node, which holds none of the topic's replicas.
const joining = 3

const (
	hintPartitions = "return a target for every partition of current, and for no other: the reassignment names each partition of the topic " +
		"(lecture 15: a fourth node and moving partitions)"
	hintMutate = "build the target in new slices (slices.Clone): current is what the topic has now, which the operator needs to roll back to"
	hintRF     = "a move replaces one replica by newNode: each partition keeps as many replicas as it has (changing the replication factor is another operation)"
	hintDup    = "a node holds at most one replica of a partition: once newNode has joined a partition, take the next replica from another partition " +
		"(Kafka refuses a replica list that names a node twice)"
	hintOne = "move at most one replica of a partition, and only onto newNode: every replica that changes is copied over the network, " +
		"and a partition that loses two of its replicas at once has less to fall back on (lecture 15: a fourth node and moving partitions)"
	hintFirst = "put newNode first in every partition it joins: the first replica is the preferred leader, and the preferred election " +
		"hands newNode the leadership only there; a follower serves no producer and no consumer (lecture 15: a fourth node and moving partitions)"
	hintOrder = "keep the replicas that stay in their order, and leave a partition newNode does not join as it is: " +
		"the first replica is the partition's preferred leader, and reordering moves leadership for nothing"
	hintShare = "newNode's fair share is the topic's replicas / the nodes (the assignment's and newNode), rounded down: " +
		"fewer leaves it idle, and every replica more is copied for nothing"
	hintBalance = "take each replica from the node that holds the most replicas at that moment, not from the partition's leader or the first node you meet: " +
		"the nodes must end within one replica of each other"
	hintCluster = "the target passed every check, and the cluster did not end as it says: look at what the message reports " +
		"(a reassignment the cluster could not complete, a node that went away)"
	hintWitness = "a reassignment that keeps the replication factor never loses or duplicates an acknowledged order: " +
		"if the witness counted some, the cluster went through a fault while it ran; check again"
)

// onTwo is the grader's topic: 6 partitions with two replicas on nodes 1
// and 2 only, partitions 0-2 led by node 1 and 3-5 by node 2.
func onTwo() map[int32][]int32 {
	a := map[int32][]int32{}
	for p := range int32(6) {
		a[p] = []int32{1, 2}
		if p >= 3 {
			a[p] = []int32{2, 1}
		}
	}
	return a
}

// pure is a case checked without a cluster: the target's properties only.
type pure struct {
	what    string
	current map[int32][]int32
	newNode int32
}

// more are the grader's other assignments: the share rounded down (10
// replicas on 3 nodes), and a topic of three replicas on three nodes
// spread onto a fourth.
func more() []pure {
	five := map[int32][]int32{}
	for p := range int32(5) {
		five[p] = []int32{1 + p%2, 2 - p%2}
	}
	twelve := map[int32][]int32{}
	for p := range int32(12) {
		twelve[p] = []int32{1 + p%3, 1 + (p+1)%3, 1 + (p+2)%3}
	}
	return []pure{
		{"5 partitions, 2 replicas on nodes 1 and 2", five, 3},
		{"12 partitions, 3 replicas on nodes 1-3", twelve, 4},
	}
}

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	if env.Simulated {
		// kfake accepts a reassignment and moves nothing: the properties
		// of the targets are all a simulation can grade.
		for _, c := range append([]pure{{"6 partitions, 2 replicas on nodes 1 and 2", onTwo(), joining}}, more()...) {
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
	for _, n := range []int32{1, 2, joining} {
		if !slices.Contains(brokers.NodeIDs(), n) {
			t.Fatalf("the cluster has no node %d (brokers %v): the grader needs the course stand's nodes 1-3 up", n, brokers.NodeIDs())
		}
	}

	topic := create(ctx, t, cl, adm, "ex-spread", onTwo())
	fill(ctx, t, env, topic)
	current := assignment(ctx, t, adm, topic)
	if !equal(current, onTwo()) {
		t.Fatalf("created %s on %s and the cluster has %s", topic, show(onTwo()), show(current))
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

	c := pure{"topic " + topic, current, joining}
	target := call(t, c)
	check(t, c, target)
	for _, c := range more() {
		check(t, c, call(t, c))
	}

	// The reassignment, as Spread asked for it.
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
	var leaders map[int32]int32
	var notFull []string
	brewkit.WaitFor(ctx, 30*time.Second, 250*time.Millisecond, func() bool { //nolint:errcheck // judged below
		after, leaders, notFull = describe(ctx, adm, topic)
		return equal(after, target) && len(notFull) == 0
	})
	if !equal(after, target) {
		grade.Fail(t, hintCluster, "Kafka called the reassignment complete after %s, and %s's replicas are %s, not the target %s",
			time.Since(start).Round(100*time.Millisecond), topic, show(after), show(target))
	}
	if len(notFull) > 0 {
		grade.Fail(t, hintCluster, "the replicas are the target, and 30 s later some ISRs are not full: %s", strings.Join(notFull, "; "))
	}

	// Leadership to the preferred replicas: node 3 where it is first.
	parts := slices.Sorted(maps.Keys(target))
	brewkit.WaitFor(ctx, 30*time.Second, 500*time.Millisecond, func() bool { //nolint:errcheck // judged below
		elect(ctx, adm, topic, parts)
		_, leaders, _ = describe(ctx, adm, topic)
		for _, p := range parts {
			if leaders[p] != target[p][0] {
				return false
			}
		}
		return true
	})
	for _, p := range parts {
		if target[p][0] == joining && leaders[p] != joining {
			grade.Fail(t, hintCluster, "partition %d's replicas are %v, and after the preferred election its leader is node %d, not node %d", p, target[p], leaders[p], joining)
		}
	}

	rep := w.Stop(time.Minute)
	stopped = true
	if rep.Acked == 0 {
		t.Fatalf("the witness wrote nothing to %s: %s", topic, rep)
	}
	if !rep.OK() {
		grade.Fail(t, hintWitness, "while %s moved, the witness %s", topic, rep)
	}
	t.Logf("%s moved to %s in %s; node %d leads partitions %v; witness: %s",
		topic, show(target), time.Since(start).Round(100*time.Millisecond), joining, led(leaders, joining), rep)
}

// call runs Spread on a copy of c.current, and fails the grade if Spread
// changed it.
func call(t *testing.T, c pure) map[int32][]int32 {
	t.Helper()
	in := clone(c.current)
	target := Spread(in, c.newNode)
	if !equal(in, c.current) {
		grade.Fail(t, hintMutate, "%s: Spread(current, %d) changed current, %s, to %s", c.what, c.newNode, show(c.current), show(in))
	}
	return target
}

// check holds a target to every property the task names, and fails the
// grade on the first it lacks.
func check(t *testing.T, c pure, target map[int32][]int32) {
	t.Helper()
	cur, n := c.current, c.newNode
	what := fmt.Sprintf("%s (%s): Spread(current, %d)", c.what, show(cur), n)
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
		gone, came := minus(was, is), minus(is, was)
		if len(gone) > 1 {
			grade.Fail(t, hintOne, "%s: partition %d changes %d replicas, %v to %v: at most one may move", what, p, len(gone), was, is)
		}
		for _, r := range came {
			if r != n {
				grade.Fail(t, hintOne, "%s: partition %d's replicas %v to %v put node %d in: only node %d joins", what, p, was, is, r, n)
			}
		}
		if len(came) == 0 {
			if !slices.Equal(is, was) {
				grade.Fail(t, hintOrder, "%s: partition %d, which node %d does not join, has its replicas reordered, %v to %v", what, p, n, was, is)
			}
			continue
		}
		if is[0] != n {
			grade.Fail(t, hintFirst, "%s: node %d joins partition %d as %v, not first: after the preferred election node %d still leads it", what, n, p, is, is[0])
		}
		if kept := slices.DeleteFunc(slices.Clone(was), func(r int32) bool { return r == gone[0] }); !slices.Equal(is[1:], kept) {
			grade.Fail(t, hintOrder, "%s: partition %d goes from %v to %v: after node %d, the replicas kept should be %v, in their order", what, p, was, is, n, kept)
		}
	}

	load := map[int32]int{n: 0}
	total := 0
	for _, rs := range target {
		for _, r := range rs {
			load[r]++
			total++
		}
	}
	share := total / len(load)
	if got := load[n]; got != share {
		more := "so it serves less than its share"
		if got > share {
			more = fmt.Sprintf("copying %s more than needed", replicas(got-share))
		}
		grade.Fail(t, hintShare, "%s gives node %d %d replicas; its fair share is %d (%d replicas / %d nodes, rounded down), %s: %s",
			what, n, got, share, total, len(load), more, show(target))
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

// minus is the nodes of a not in b.
func minus(a, b []int32) []int32 {
	var out []int32
	for _, r := range a {
		if !slices.Contains(b, r) {
			out = append(out, r)
		}
	}
	return out
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

func led(leaders map[int32]int32, n int32) []int32 {
	var ps []int32
	for _, p := range slices.Sorted(maps.Keys(leaders)) {
		if leaders[p] == n {
			ps = append(ps, p)
		}
	}
	return ps
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

package spread

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"

	"github.com/brew-course/kafka/lectures/15-operations/exercises/internal/movecheck"
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
	return []pure{
		{"5 partitions, 2 replicas on nodes 1 and 2", movecheck.RoundRobin(5, 2, 2), 3},
		{"12 partitions, 3 replicas on nodes 1-3", movecheck.RoundRobin(12, 3, 3), 4},
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
		movecheck.LogSimulated(t, env)
		return
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cl := env.Client(t)
	movecheck.NeedNodes(ctx, t, cl, 1, 2, joining)

	topic, current := movecheck.CreateTopicOn(ctx, t, env, "ex-spread", onTwo())
	w := movecheck.StartWitness(ctx, t, env, topic)

	c := pure{"topic " + topic, current, joining}
	target := call(t, c)
	check(t, c, target)
	for _, c := range more() {
		check(t, c, call(t, c))
	}

	// The reassignment, as Spread asked for it.
	start, _ := movecheck.Apply(ctx, t, cl, topic, target)

	// Leadership to the preferred replicas: node 3 where it is first.
	adm := kadm.NewClient(cl)
	parts := slices.Sorted(maps.Keys(target))
	var leaders map[int32]int32
	brewkit.WaitFor(ctx, 30*time.Second, 500*time.Millisecond, func() bool { //nolint:errcheck // judged below
		elect(ctx, adm, topic, parts)
		_, leaders, _ = movecheck.Describe(ctx, cl, topic)
		for _, p := range parts {
			if leaders[p] != target[p][0] {
				return false
			}
		}
		return true
	})
	for _, p := range parts {
		if target[p][0] == joining && leaders[p] != joining {
			grade.Fail(t, movecheck.HintCluster, "partition %d's replicas are %v, and after the preferred election its leader is node %d, not node %d", p, target[p], leaders[p], joining)
		}
	}

	rep := w.Stop(t)
	if !rep.OK() {
		grade.Fail(t, movecheck.HintWitness, "while %s moved, the witness %s", topic, rep)
	}
	t.Logf("%s moved to %s in %s; node %d leads partitions %v; witness: %s",
		topic, movecheck.Show(target), time.Since(start).Round(100*time.Millisecond), joining, led(leaders, joining), rep)
}

// call runs Spread on a copy of c.current, and fails the grade if Spread
// changed it.
func call(t *testing.T, c pure) map[int32][]int32 {
	t.Helper()
	in := movecheck.Clone(c.current)
	target := Spread(in, c.newNode)
	if !movecheck.Equal(in, c.current) {
		grade.Fail(t, hintMutate, "%s: Spread(current, %d) changed current, %s, to %s", c.what, c.newNode, movecheck.Show(c.current), movecheck.Show(in))
	}
	return target
}

// check holds a target to every property the task names, and fails the
// grade on the first it lacks.
func check(t *testing.T, c pure, target map[int32][]int32) {
	t.Helper()
	cur, n := c.current, c.newNode
	what := fmt.Sprintf("%s (%s): Spread(current, %d)", c.what, movecheck.Show(cur), n)
	if msg := movecheck.SamePartitions(what, cur, target); msg != "" {
		grade.Fail(t, hintPartitions, "%s", msg)
	}
	for _, p := range slices.Sorted(maps.Keys(cur)) {
		was, is := cur[p], target[p]
		if msg := movecheck.SameRF(what, p, was, is); msg != "" {
			grade.Fail(t, hintRF, "%s", msg)
		}
		if msg := movecheck.NoNodeTwice(what, p, was, is); msg != "" {
			grade.Fail(t, hintDup, "%s", msg)
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
			more = fmt.Sprintf("copying %s more than needed", movecheck.Replicas(got-share))
		}
		grade.Fail(t, hintShare, "%s gives node %d %d replicas; its fair share is %d (%d replicas / %d nodes, rounded down), %s: %s",
			what, n, got, share, total, len(load), more, movecheck.Show(target))
	}
	if msg := movecheck.Balanced(what, load, target); msg != "" {
		grade.Fail(t, hintBalance, "%s", msg)
	}
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

func led(leaders map[int32]int32, n int32) []int32 {
	var ps []int32
	for _, p := range slices.Sorted(maps.Keys(leaders)) {
		if leaders[p] == n {
			ps = append(ps, p)
		}
	}
	return ps
}

// elect asks for the preferred leaders of the topic's partitions, named
// one by one (kadm asks for no partition of a topic given alone).
func elect(ctx context.Context, adm *kadm.Client, topic string, parts []int32) {
	set := kadm.TopicsSet{}
	set.Add(topic, parts...)
	adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set) //nolint:errcheck // the leaders are read back
}

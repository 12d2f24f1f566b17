package drain

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/grade"

	"github.com/brew-course/kafka/lectures/15-operations/exercises/internal/movecheck"
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
)

// onThree is the grader's topic: 6 partitions with two replicas spread
// over nodes 1-3, each node leading two.
func onThree() map[int32][]int32 { return movecheck.RoundRobin(6, 2, 3) }

// pure is a case checked without a cluster: the target's properties only.
type pure struct {
	what    string
	current map[int32][]int32
	node    int32
}

// more are the grader's other assignments, where a drained replica has
// more than one place to go: two replicas on four nodes, three on five.
func more() []pure {
	return []pure{
		{"8 partitions, 2 replicas on nodes 1-4", movecheck.RoundRobin(8, 2, 4), 2},
		{"10 partitions, 3 replicas on nodes 1-5", movecheck.RoundRobin(10, 3, 5), 1},
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
		movecheck.LogSimulated(t, env)
		return
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cl := env.Client(t)
	movecheck.NeedNodes(ctx, t, cl, 1, 2, leaving)

	topic, current := movecheck.CreateTopicOn(ctx, t, env, "ex-drain", onThree())
	w := movecheck.StartWitness(ctx, t, env, topic)

	c := pure{"topic " + topic, current, leaving}
	target := call(t, c)
	check(t, c, target)
	for _, c := range more() {
		check(t, c, call(t, c))
	}

	// The reassignment, as Drain asked for it.
	start, after := movecheck.Apply(ctx, t, cl, topic, target)
	for _, p := range slices.Sorted(maps.Keys(after)) {
		if slices.Contains(after[p], leaving) {
			grade.Fail(t, hintLeft, "after the reassignment partition %d of %s still has a replica on node %d: %v", p, topic, leaving, after[p])
		}
	}

	rep := w.Stop(t)
	if !rep.OK() {
		grade.Fail(t, movecheck.HintWitness, "while %s moved off node %d, the witness %s", topic, leaving, rep)
	}
	t.Logf("%s moved to %s in %s, node %d holds none of it; witness: %s",
		topic, movecheck.Show(target), time.Since(start).Round(100*time.Millisecond), leaving, rep)
}

// call runs Drain on a copy of c.current, and fails the grade if Drain
// changed it.
func call(t *testing.T, c pure) map[int32][]int32 {
	t.Helper()
	in := movecheck.Clone(c.current)
	target := Drain(in, c.node)
	if !movecheck.Equal(in, c.current) {
		grade.Fail(t, hintMutate, "%s: Drain(current, %d) changed current, %s, to %s", c.what, c.node, movecheck.Show(c.current), movecheck.Show(in))
	}
	return target
}

// check holds a target to every property the task names, and fails the
// grade on the first it lacks.
func check(t *testing.T, c pure, target map[int32][]int32) {
	t.Helper()
	cur, n := c.current, c.node
	what := fmt.Sprintf("%s (%s): Drain(current, %d)", c.what, movecheck.Show(cur), n)
	others := map[int32]bool{}
	for _, rs := range cur {
		for _, r := range rs {
			if r != n {
				others[r] = true
			}
		}
	}
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
	if msg := movecheck.Balanced(what, load, target); msg != "" {
		grade.Fail(t, hintBalance, "%s", msg)
	}
}

func ordinal(i int) string {
	if i < 5 {
		return []string{"first", "second", "third", "fourth", "fifth"}[i]
	}
	return fmt.Sprintf("#%d", i+1)
}

// Package spread is exercise 15/spread: give a new node its fair share of a topic's replicas.
//
// Graded on: any stand.
//
// A node joined the cluster and Kafka moved nothing onto it by itself.
// Write Spread: given a topic's replica assignment (partition -> replicas,
// the preferred leader first), balanced over its nodes, and newNode, which
// holds none of them, return the target assignment to reassign the topic
// to. newNode must carry its fair
// share of the replicas, the total number of replicas divided by the number
// of nodes (the nodes of the assignment and newNode), rounded down, and every
// node (newNode too) must end within one replica of every other. Move as
// little as that allows: each move replaces one replica of a partition by
// newNode, no partition changes more than one replica, so exactly the fair
// share moves; the kept replicas stay in their order, newNode goes first in
// a partition it joins (the preferred election then hands it the
// leadership), and a partition it does not join stays as it is. Every
// partition keeps its replication factor and never names a node twice. The
// grader checks those properties on its own assignments, then on real Kafka
// (the course stand) creates a topic of 6 partitions with 2 replicas on
// nodes 1 and 2 only, writes to it, starts a witness writing and reading
// orders, reassigns the topic to Spread(current, 3) with
// AlterPartitionReassignments, waits until the reassignment is complete,
// elects the preferred leaders, and checks that the replicas are the target,
// every ISR is full, node 3 leads the partitions it is first in, and the
// witness lost and duplicated nothing. On a simulation (kfake moves no
// replica) it checks the properties only, and says so.
package spread

// Spread returns the target assignment of a topic whose replicas are
// current (partition -> replicas, preferred leader first): newNode takes its
// fair share of the replicas, moving as few as possible. It must not change
// current.
func Spread(current map[int32][]int32, newNode int32) map[int32][]int32 {
	// TODO: count each node's replicas and newNode's share; then, one
	// partition at a time, let the most loaded node hand newNode its
	// replica, newNode first, until newNode has its share.
	return current
}

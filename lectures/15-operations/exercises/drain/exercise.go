// Package drain is exercise 15/drain: move every replica of a topic off a node before it leaves.
//
// Graded on: any stand.
//
// A node is about to leave the cluster, and first every replica it holds
// must move to the other nodes. Write Drain: given a topic's replica
// assignment (partition -> replicas, the preferred leader first) and the
// node to drain, return the target assignment to reassign the topic to.
// The target has no replica on the node: each of its replicas is replaced
// by one of the assignment's other nodes, in the drained replica's place in
// the list (the partition's other replicas stay, in their order, so a
// partition the node did not lead keeps its preferred leader), and a
// partition without the node stays as it is. Every partition keeps its replication
// factor and never names a node twice, and the nodes that remain end within
// one replica of each other. The grader checks those properties on its own
// assignments, then on real Kafka (the course stand) creates a topic of 6
// partitions with 2 replicas spread over nodes 1-3, writes to it, starts a
// witness writing and reading orders, reassigns the topic to
// Drain(current, 3) with AlterPartitionReassignments, waits until the
// reassignment is complete, and checks that the replicas are the target,
// node 3 holds none of them, every ISR is full, and the witness lost and
// duplicated nothing. On a simulation (kfake moves no replica) it checks the
// properties only, and says so.
package drain

// Drain returns the target assignment of a topic whose replicas are
// current (partition -> replicas, preferred leader first) with every
// replica on node moved to the assignment's other nodes. It must not
// change current.
func Drain(current map[int32][]int32, node int32) map[int32][]int32 {
	// TODO: count the other nodes' replicas; then in each partition that
	// has node, put in its place the least loaded other node the partition
	// does not have yet.
	return current
}

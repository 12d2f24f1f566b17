// The reference solution of exercise 15/drain.
package drain

import (
	"maps"
	"slices"
)

// Drain counts the replicas of every node but the drained one, then goes
// through the partitions in order: where node is, it puts in its place the
// node with the fewest replicas so far (the lowest id on a tie) among those
// the partition does not have yet. Always giving the next replica to the
// least loaded node keeps the nodes that remain within one of each other.
func Drain(current map[int32][]int32, node int32) map[int32][]int32 {
	target := map[int32][]int32{}
	load := map[int32]int{}
	for p, rs := range current {
		target[p] = slices.Clone(rs)
		for _, r := range rs {
			if r != node {
				load[r]++
			}
		}
	}
	others := slices.Sorted(maps.Keys(load))
	for _, p := range slices.Sorted(maps.Keys(target)) {
		rs := target[p]
		i := slices.Index(rs, node)
		if i < 0 {
			continue
		}
		to := int32(-1)
		for _, n := range others {
			if !slices.Contains(rs, n) && (to < 0 || load[n] < load[to]) {
				to = n
			}
		}
		if to < 0 {
			continue // every other node has the partition already: it cannot keep its replication factor
		}
		rs[i] = to
		load[to]++
	}
	return target
}

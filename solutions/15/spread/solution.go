// The reference solution of exercise 15/spread.
package spread

import (
	"maps"
	"slices"
)

// Spread counts each node's replicas and newNode's share (total / nodes,
// newNode included, rounded down), then moves one replica at a time: of
// the partitions newNode has not joined yet, the replica on the node that
// holds the most replicas now (the lowest node id, then the lowest
// partition, on a tie) is replaced by newNode, which goes first. Taking
// from the most loaded node keeps the others within one of each other.
func Spread(current map[int32][]int32, newNode int32) map[int32][]int32 {
	target := map[int32][]int32{}
	load := map[int32]int{}
	total := 0
	for p, rs := range current {
		target[p] = slices.Clone(rs)
		for _, r := range rs {
			load[r]++
			total++
		}
	}
	share := total / (len(load) + 1)
	joined := map[int32]bool{}
	for range share {
		from, at := int32(-1), int32(-1)
		for _, p := range slices.Sorted(maps.Keys(target)) {
			if joined[p] {
				continue
			}
			for _, r := range target[p] {
				if from < 0 || load[r] > load[from] || load[r] == load[from] && r < from {
					from, at = r, p
				}
			}
		}
		if at < 0 {
			break // every partition has newNode: nothing more can move
		}
		kept := slices.DeleteFunc(slices.Clone(target[at]), func(r int32) bool { return r == from })
		target[at] = append([]int32{newNode}, kept...)
		joined[at] = true
		load[from]--
		load[newNode]++
	}
	return target
}

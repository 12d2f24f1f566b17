// A plausible wrong solution of exercise 15/spread: it takes each replica
// from the most loaded node, but forgets which partitions newNode has
// joined already. The most loaded node's replica is often in a partition
// newNode has just joined, and newNode replaces it too: that partition
// names newNode twice and changes two replicas. The grader must fail it.
package spread

import (
	"maps"
	"slices"
)

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
	for range share {
		from, at := int32(-1), int32(-1)
		for _, p := range slices.Sorted(maps.Keys(target)) {
			for _, r := range target[p] {
				if from < 0 || load[r] > load[from] || load[r] == load[from] && r < from {
					from, at = r, p
				}
			}
		}
		kept := slices.DeleteFunc(slices.Clone(target[at]), func(r int32) bool { return r == from })
		target[at] = append([]int32{newNode}, kept...)
		load[from]--
		load[newNode]++
	}
	return target
}

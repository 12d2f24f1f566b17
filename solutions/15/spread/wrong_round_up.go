// A plausible wrong solution of exercise 15/spread: newNode's share is
// rounded up ("better too much than too little"). When the replicas do not
// divide evenly among the nodes, one replica more than the fair share is
// copied to newNode; the nodes stay within one of each other, so nothing
// looks wrong but the bytes moved. The grader must fail it.
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
	nodes := len(load) + 1
	share := (total + nodes - 1) / nodes
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
			break
		}
		kept := slices.DeleteFunc(slices.Clone(target[at]), func(r int32) bool { return r == from })
		target[at] = append([]int32{newNode}, kept...)
		joined[at] = true
		load[from]--
		load[newNode]++
	}
	return target
}

// A plausible wrong solution of exercise 15/drain: it takes the drained
// node out of the list and appends the replacement at the end. Where the
// drained node was first, the partition's old second replica becomes its
// preferred leader and the replacement a follower: the leaders move for no
// reason, and where the drained node was not first the list is reordered.
// The grader must fail it.
package drain

import (
	"maps"
	"slices"
)

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
		if !slices.Contains(rs, node) {
			continue
		}
		to := int32(-1)
		for _, n := range others {
			if !slices.Contains(rs, n) && (to < 0 || load[n] < load[to]) {
				to = n
			}
		}
		if to < 0 {
			continue
		}
		rs = slices.DeleteFunc(rs, func(r int32) bool { return r == node })
		target[p] = append(rs, to)
		load[to]++
	}
	return target
}

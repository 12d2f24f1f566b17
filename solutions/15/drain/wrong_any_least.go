// A plausible wrong solution of exercise 15/drain: each drained replica
// goes to the least loaded node, without asking whether the partition has
// a replica on it already. Sooner or later the least loaded node is the
// partition's other replica, and the partition names it twice. The grader
// must fail it.
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
		i := slices.Index(rs, node)
		if i < 0 {
			continue
		}
		to := others[0]
		for _, n := range others {
			if load[n] < load[to] {
				to = n
			}
		}
		rs[i] = to
		load[to]++
	}
	return target
}

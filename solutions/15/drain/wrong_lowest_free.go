// A plausible wrong solution of exercise 15/drain: each drained replica
// goes to the lowest-numbered node the partition does not have yet, with
// no count of what each node holds. On three nodes that is forced and
// right; on more, the low-numbered nodes take almost everything. The grader
// must fail it.
package drain

import (
	"maps"
	"slices"
)

func Drain(current map[int32][]int32, node int32) map[int32][]int32 {
	target := map[int32][]int32{}
	nodes := map[int32]bool{}
	for p, rs := range current {
		target[p] = slices.Clone(rs)
		for _, r := range rs {
			if r != node {
				nodes[r] = true
			}
		}
	}
	others := slices.Sorted(maps.Keys(nodes))
	for _, p := range slices.Sorted(maps.Keys(target)) {
		rs := target[p]
		i := slices.Index(rs, node)
		if i < 0 {
			continue
		}
		for _, n := range others {
			if !slices.Contains(rs, n) {
				rs[i] = n
				break
			}
		}
	}
	return target
}

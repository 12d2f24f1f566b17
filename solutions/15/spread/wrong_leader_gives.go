// A plausible wrong solution of exercise 15/spread: the leader of each of
// the first partitions hands its replica to newNode ("newNode should lead,
// so it replaces the leader"). The count is right and newNode is first, but
// which node gives up a replica follows the leaders, not the load: where
// one node leads the first partitions, it ends with two replicas fewer than
// another. The grader must fail it.
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
	moved := 0
	for _, p := range slices.Sorted(maps.Keys(target)) {
		if moved == share {
			break
		}
		target[p] = append([]int32{newNode}, target[p][1:]...)
		moved++
	}
	return target
}

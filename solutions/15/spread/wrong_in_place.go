// A plausible wrong solution of exercise 15/spread: newNode takes the
// moved replica's place in the list instead of going first. Where the
// moved replica was a follower, newNode is a follower too, and the
// preferred election leaves the leadership where it was: the new node
// holds data and serves no one. The grader must fail it.
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
		target[at][slices.Index(target[at], from)] = newNode
		joined[at] = true
		load[from]--
		load[newNode]++
	}
	return target
}

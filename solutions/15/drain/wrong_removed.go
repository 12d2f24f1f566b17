// A plausible wrong solution of exercise 15/drain: it only takes the
// drained node out of each list ("Kafka will re-replicate what is
// missing"). Kafka does not: the reassignment makes the listed replicas
// the partition's replicas, and the partitions that held a replica on the
// node are left with one replica fewer. The grader must fail it.
package drain

import "slices"

func Drain(current map[int32][]int32, node int32) map[int32][]int32 {
	target := map[int32][]int32{}
	for p, rs := range current {
		target[p] = slices.DeleteFunc(slices.Clone(rs), func(r int32) bool { return r == node })
	}
	return target
}

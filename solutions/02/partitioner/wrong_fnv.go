// A plausible wrong solution of exercise 02/partitioner: a good hash, but not
// the one Kafka uses. The grader must fail it.
package partitioner

import "hash/fnv"

func Partition(key []byte, partitions int) int {
	h := fnv.New32a()
	h.Write(key)
	return int(h.Sum32() % uint32(partitions))
}

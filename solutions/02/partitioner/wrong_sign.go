// A plausible wrong solution of exercise 02/partitioner: Kafka's murmur2, but
// the hash taken modulo as an unsigned number instead of with its sign bit
// cleared, so every key whose hash has the top bit set lands elsewhere. The
// grader must fail it.
package partitioner

func Partition(key []byte, partitions int) int {
	return int(murmur2(key) % uint32(partitions))
}

func murmur2(b []byte) uint32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	h := uint32(seed) ^ uint32(len(b))
	for ; len(b) >= 4; b = b[4:] {
		k := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	switch len(b) {
	case 3:
		h ^= uint32(b[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(b[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(b[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}

// Package partition computes where a keyed record lands, the way the Java
// client's default partitioner (and franz-go's) does: murmur2 of the key,
// made positive, modulo the partition count.
package partition

// Murmur2 is the 32-bit MurmurHash2 with Kafka's seed, as Kafka's
// Utils.murmur2 computes it.
func Murmur2(data []byte) uint32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	h := uint32(seed) ^ uint32(len(data))
	for len(data) >= 4 {
		k := uint32(data[0]) | uint32(data[1])<<8 | uint32(data[2])<<16 | uint32(data[3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h = h*m ^ k
		data = data[4:]
	}
	switch len(data) { // the tail, fall through from the longest
	case 3:
		h ^= uint32(data[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}

// Positive is Kafka's toPositive: the hash with its sign bit cleared.
func Positive(h uint32) int32 { return int32(h & 0x7fffffff) }

// ForKey is the partition a record with key lands in among n partitions.
func ForKey(key []byte, n int32) int32 { return Positive(Murmur2(key)) % n }

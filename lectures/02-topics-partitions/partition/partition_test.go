package partition

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Vectors from Kafka's own tests of Utils.murmur2 (as signed 32-bit ints).
func TestMurmur2MatchesKafka(t *testing.T) {
	for key, want := range map[string]int32{
		"21":                         -973932308,
		"foobar":                     -790332482,
		"a-little-bit-long-string":   -985981536,
		"a-little-bit-longer-string": -1486304829,
		"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc": 479470107,
	} {
		if got := int32(Murmur2([]byte(key))); got != want {
			t.Errorf("murmur2(%q) = %d, want %d", key, got, want)
		}
	}
}

// The prediction equals franz-go's default partitioner for keyed records.
func TestForKeyMatchesFranzGo(t *testing.T) {
	p := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	for _, n := range []int32{1, 3, 6, 7, 12} {
		for i := range 2000 {
			key := []byte(fmt.Sprintf("ord-%07d", i))
			if got, want := ForKey(key, n), int32(p.Partition(&kgo.Record{Key: key}, int(n))); got != want {
				t.Fatalf("key %s, %d partitions: ForKey %d, franz-go %d", key, n, got, want)
			}
		}
	}
}

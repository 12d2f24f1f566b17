package partitioncount

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// partitioner is kgo's default for keyed records, and Kafka's: murmur2 of
// the key, its sign bit cleared, modulo the partition count.
var partitioner = kgo.StickyKeyPartitioner(nil).ForTopic("")

// Partition is the partition of n that the default partitioner (kgo's, the
// same as the Java client's) sends a record with key to.
func Partition(key []byte, n int) int {
	return partitioner.Partition(&kgo.Record{Key: key}, n)
}

// Keys is a set of record keys.
type Keys struct {
	What string // "80 shops"
	Keys [][]byte
}

// ShopKeys are Brew's 80 shops, shop-01 to shop-80: the kitchen's key.
func ShopKeys() Keys {
	k := Keys{What: "80 shops"}
	for n := 1; n <= brewkit.Shops; n++ {
		k.Keys = append(k.Keys, []byte(brewkit.ShopID(n)))
	}
	return k
}

// OrderKeys are n order ids, ord-0000001 on: the key of every Brew event.
func OrderKeys(n int) Keys {
	k := Keys{What: formatCount(n) + " order ids"}
	for i := 1; i <= n; i++ {
		k.Keys = append(k.Keys, []byte(brewkit.OrderID(int64(i))))
	}
	return k
}

// Growths are the partition count changes "what growing costs" counts:
// adding one, a third, and doubling.
var Growths = [][2]int{{6, 7}, {6, 8}, {6, 12}}

// Move is what one growth does to one set of keys.
type Move struct {
	Keys     string // which keys
	N        int    // how many
	From, To int    // partitions before and after
	Moved    int    // keys whose partition changes
}

// Share is the fraction of keys that move.
func (m Move) Share() float64 {
	if m.N == 0 {
		return 0
	}
	return float64(m.Moved) / float64(m.N)
}

// Moved counts the keys whose partition differs between from and to partitions.
func Moved(keys [][]byte, from, to int) int {
	n := 0
	for _, k := range keys {
		if Partition(k, from) != Partition(k, to) {
			n++
		}
	}
	return n
}

// Movements counts, for each key set and each growth, the keys that move.
func Movements(sets []Keys, growths [][2]int) []Move {
	var out []Move
	for _, s := range sets {
		for _, g := range growths {
			out = append(out, Move{Keys: s.What, N: len(s.Keys), From: g[0], To: g[1], Moved: Moved(s.Keys, g[0], g[1])})
		}
	}
	return out
}

// formatCount writes n with thousands separated by commas: 10,000.
func formatCount(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

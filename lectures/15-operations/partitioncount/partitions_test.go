package partitioncount

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// murmur2 is Kafka's Utils.murmur2, written again here from the Java
// source, so that the test does not take kgo's word for kgo's partitions.
func murmur2(data []byte) int32 {
	const (
		seed = int32(-1756908916) // 0x9747b28c
		m    = int32(0x5bd1e995)
		r    = 24
	)
	length := len(data)
	h := seed ^ int32(length)
	for i := 0; i+4 <= length; i += 4 {
		k := int32(data[i]) | int32(data[i+1])<<8 | int32(data[i+2])<<16 | int32(data[i+3])<<24
		k *= m
		k ^= int32(uint32(k) >> r)
		k *= m
		h *= m
		h ^= k
	}
	tail := length &^ 3
	switch length % 4 {
	case 3:
		h ^= int32(data[tail+2]) << 16
		fallthrough
	case 2:
		h ^= int32(data[tail+1]) << 8
		fallthrough
	case 1:
		h ^= int32(data[tail])
		h *= m
	}
	h ^= int32(uint32(h) >> 13)
	h *= m
	h ^= int32(uint32(h) >> 15)
	return h
}

// kafkaPartition is the Java client's BuiltInPartitioner.partitionForKey.
func kafkaPartition(key []byte, n int) int { return int(murmur2(key)&0x7fffffff) % n }

// The murmur2 above is Kafka's: the values of Kafka's own UtilsTest.testMurmur2.
func TestMurmur2IsKafkas(t *testing.T) {
	for key, want := range map[string]int32{
		"21":                         -973932308,
		"foobar":                     -790332482,
		"a-little-bit-long-string":   -985981536,
		"a-little-bit-longer-string": -1486304829,
		"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc": 479470107,
	} {
		require.Equal(t, want, murmur2([]byte(key)), key)
	}
}

// Partition, kgo's default partitioner, places every key as Kafka's does.
func TestPartitionIsKafkas(t *testing.T) {
	keys := append(ShopKeys().Keys, OrderKeys(2000).Keys...)
	for _, n := range []int{1, 3, 6, 7, 8, 12, 100} {
		for _, k := range keys {
			require.Equal(t, kafkaPartition(k, n), Partition(k, n), "key %s, %d partitions", k, n)
		}
	}
}

// The key movements are exact: counted again with Kafka's murmur2, and
// near what the arithmetic says (a key stays when h%to == h%from: half of
// them for 6 -> 12, a quarter for 6 -> 8, a seventh for 6 -> 7).
func TestKeyMovementExact(t *testing.T) {
	sets := []Keys{ShopKeys(), OrderKeys(OrderKeyCount)}
	require.Len(t, sets[0].Keys, 80)
	require.Equal(t, "shop-01", string(sets[0].Keys[0]))
	require.Equal(t, "10,000 order ids", sets[1].What)
	moves := Movements(sets, Growths)
	require.Len(t, moves, len(sets)*len(Growths))
	stays := map[[2]int]float64{{6, 7}: 1.0 / 7, {6, 8}: 1.0 / 4, {6, 12}: 1.0 / 2}
	for i, m := range moves {
		s := sets[i/len(Growths)]
		want := 0
		for _, k := range s.Keys {
			if kafkaPartition(k, m.From) != kafkaPartition(k, m.To) {
				want++
			}
		}
		require.Equal(t, want, m.Moved, "%s %d -> %d", m.Keys, m.From, m.To)
		require.Equal(t, len(s.Keys), m.N)
		if m.N >= 10_000 {
			require.InDelta(t, 1-stays[[2]int{m.From, m.To}], m.Share(), 0.02, "%s %d -> %d", m.Keys, m.From, m.To)
		}
		t.Logf("%-16s %2d -> %2d: %5d of %5d moved (%.2f%%)", m.Keys, m.From, m.To, m.Moved, m.N, 100*m.Share())
	}
	// Doubling moves a key from p to p or p+6, never elsewhere.
	for _, k := range sets[1].Keys {
		p6, p12 := Partition(k, 6), Partition(k, 12)
		require.True(t, p12 == p6 || p12 == p6+6, "key %s: %d -> %d", k, p6, p12)
	}
}

// The formula takes the largest of its three constraints, whichever it is.
func TestChooseTakesTheLargest(t *testing.T) {
	base := Target{Topic: "t", Peak: 1000, Headroom: 3, Parallel: 2} // 3,000/s
	// The writes decide: 3,000/s on partitions that take 500/s each.
	c := Choose(base, 500, 1e6, 3)
	require.Equal(t, ByProduce, c.Decides)
	require.InDelta(t, 6.0, c.ByProduce, 1e-9)
	require.Equal(t, 6, c.Need)
	require.Equal(t, 6, c.Partitions)
	// The consumers' processing decides: 10 ms a record is 100/s a consumer.
	slow := base
	slow.PerRecord = 10 * time.Millisecond
	c = Choose(slow, 1e6, 50_000, 3)
	require.Equal(t, ByConsume, c.Decides)
	require.InDelta(t, 100.0, c.ConsumePerConsumer, 1e-9, "the lower of what Kafka delivers and what the consumer handles")
	require.InDelta(t, 30.0, c.ByConsume, 1e-9)
	require.Equal(t, 30, c.Need)
	require.Equal(t, 48, c.Partitions, "3·2^k at least 30")
	// The measured read rate decides when the consumer does nothing more.
	c = Choose(base, 1e6, 1000, 3)
	require.Equal(t, ByConsume, c.Decides)
	require.Equal(t, 3, c.Need)
	// The consumers wanted decide.
	many := base
	many.Parallel = 12
	c = Choose(many, 1e6, 1e6, 3)
	require.Equal(t, ByParallel, c.Decides)
	require.Equal(t, 12, c.Need)
	require.Equal(t, 12, c.Partitions)
	// Nothing measured: no count.
	c = Choose(base, 0, 0, 3)
	require.Zero(t, c.Partitions)
}

func TestRoundUp(t *testing.T) {
	for _, c := range []struct{ need, brokers, want int }{
		{1, 3, 3}, {3, 3, 3}, {4, 3, 6}, {7, 3, 12}, {12, 3, 12}, {13, 3, 24},
		{5, 1, 8}, {1, 1, 1}, {2, 0, 2}, {9, 4, 16},
	} {
		require.Equal(t, c.want, RoundUp(c.need, c.brokers), "need %d on %d brokers", c.need, c.brokers)
	}
}

// Brew's topics on the rates of a healthy cluster: the consumers decide.
// These are the counts the lecture depends on.
func TestBrewTargets(t *testing.T) {
	m := Measured{Brokers: 3, Produce: Rate{Records: 50_000, Elapsed: time.Second}, Consume: Rate{Records: 200_000, Elapsed: time.Second}}
	got := map[string]int{}
	for _, c := range ChooseAll(Targets, m) {
		got[c.Topic] = c.Partitions
		require.NotEqual(t, ByProduce, c.Decides, c.Topic)
	}
	require.Equal(t, map[string]int{
		brewkit.Orders.Name: 12, brewkit.Payments.Name: 3, brewkit.Kitchen.Name: 6, brewkit.Shipments.Name: 3,
	}, got)
}

// The records are ~300-byte order events that still decode.
func TestValues(t *testing.T) {
	for _, v := range values(300) {
		require.Len(t, v, 300)
		var e brewkit.Event
		require.NoError(t, json.Unmarshal(v, &e))
		require.Equal(t, brewkit.OrderPlaced, e.Type)
	}
}

// On the test's cluster the measurement returns positive rates, reads back
// every record it wrote, deletes its topic, and ends within its bound.
func TestMeasure(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := Defaults
	o.Duration = time.Second
	o.MaxRecords = 50_000
	o.Progress = func(s string) { t.Log(s) }
	start := time.Now()
	r, err := Run(ctx, env.Config, o)
	took := time.Since(start)
	require.NoError(t, err)
	require.Less(t, took, 15*time.Second, "the whole run, topic creation and deletion included")
	require.Positive(t, r.Produce.PerSecond())
	require.Positive(t, r.Produce.MBPerSecond())
	require.Positive(t, r.Consume.PerSecond())
	require.Equal(t, r.Produce.Records, r.Consume.Records, "every record acknowledged is read back")
	require.LessOrEqual(t, r.Produce.Records, o.MaxRecords)
	require.Less(t, r.Produce.Elapsed, o.Duration+5*time.Second, "the producer stops at -duration, and its acknowledgements follow")
	require.Equal(t, r.Produce.Records*int64(300+len(brewkit.OrderID(1))), r.Produce.Bytes)
	require.Equal(t, 3, r.Brokers)
	require.Len(t, r.Choices, len(Targets))
	for _, c := range r.Choices {
		require.Positive(t, c.Partitions, c.Topic)
	}

	var out bytes.Buffer
	r.Print(&out)
	t.Logf("in %s:\n%s", took.Round(time.Millisecond), out.String())
	for _, want := range []string{
		`(?m)^produce, 1 partition +\d+ +[\d.]+m?s +[\d,]+ +\d+\.\d$`,
		`(?m)^consume, 1 consumer +\d+ +[\d.]+m?s +[\d,]+ +\d+\.\d$`,
		`(?m)^brew\.orders\.v1 +133 +400 +\d+\.\d\d +8\.0 +12 +6 +12 +consumers wanted$`,
		`(?m)^brew\.kitchen\.v1 +267 +800 +\d+\.\d\d +4\.0 +3 +3 +6 +consume$`,
		`(?m)^10,000 order ids +\d+ moved \(8\d\.\d%\) +\d+ moved \(7\d\.\d%\) +\d+ moved \([45]\d\.\d%\)$`,
	} {
		require.Regexp(t, regexp.MustCompile(want), out.String())
	}

	// A deletion reaches each broker's metadata in its own time: the broker
	// asked may still list the topic for a moment after DeleteTopics answered.
	var listed []string
	err = brewkit.WaitFor(ctx, 10*time.Second, 100*time.Millisecond, func() bool {
		td, err := env.Admin(t).ListTopics(ctx, r.Topic)
		listed = td.Names()
		return err == nil && !td.Has(r.Topic)
	})
	require.NoError(t, err, "the measured topic is deleted: still listed %v", listed)
}

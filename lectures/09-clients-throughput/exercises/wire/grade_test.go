package wire

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const (
	orders = 20_000
	share  = 0.75 // of the defaults' bytes, at most
)

const (
	hintBytes = "a producer compresses each batch with its codec, and codecs differ in how small they make JSON: compare their ratios (lecture 09: batching and compression, make sweep)"
	hintAcks  = "fewer bytes must not cost durability: keep acks=all and idempotence (lecture 05: acks and idempotence)"
	hintRead  = "the orders must still reach the cluster, every one of them (lecture 09: producers)"
)

// byteCounter counts the bytes of the produce requests a client writes.
type byteCounter struct{ n *atomic.Int64 }

func (c byteCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, written int, _, _ time.Duration, err error) {
	if key == 0 && err == nil { // Produce
		c.n.Add(int64(written))
	}
}

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	opts := ProducerOpts()
	probe, err := brewkit.NewClient(env.Config, opts...)
	grade.Failed(t, err, "ProducerOpts must be options kgo accepts for a producer", "a client with ProducerOpts")
	acks, noIdem := probe.OptValue(kgo.RequiredAcks), probe.OptValue(kgo.DisableIdempotentWrite)
	probe.Close()
	if acks != kgo.AllISRAcks() {
		grade.Fail(t, hintAcks, "ProducerOpts sets acks to %v; Brew's orders need acks=all", acks)
	}
	if noIdem == true {
		grade.Fail(t, hintAcks, "ProducerOpts disables idempotence; Brew's orders keep it")
	}

	burst := newBurst()
	defaults := send(t, ctx, env, burst, nil)
	yours := send(t, ctx, env, burst, opts)
	t.Logf("the defaults wrote %d bytes (%.1f an order), yours %d (%.1f an order, %.0f%%)",
		defaults, float64(defaults)/orders, yours, float64(yours)/orders, 100*float64(yours)/float64(defaults))
	if float64(yours) > share*float64(defaults) {
		if len(opts) == 0 {
			grade.Fail(t, hintBytes, "ProducerOpts returns no options, so the %d orders went out in %d bytes of produce requests (%.1f an order), as with the defaults; want at most %.0f%% of the defaults' %d",
				orders, yours, float64(yours)/orders, 100*share, defaults)
		}
		grade.Fail(t, hintBytes, "your options wrote %d bytes of produce requests for %d orders (%.1f an order), the defaults %d (%.1f): %.0f%% of them, want at most %.0f%%",
			yours, orders, float64(yours)/orders, defaults, float64(defaults)/orders, 100*float64(yours)/float64(defaults), 100*share)
	}
}

// newBurst is the orders, the same for both producers.
func newBurst() []brewkit.Event {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	now := time.Now()
	out := make([]brewkit.Event, orders)
	for i := range out {
		out[i] = brewkit.NewOrder(rng, int64(i+1), now)
	}
	return out
}

// send produces the burst to a fresh topic with opts, reads it back, and
// returns the bytes of its produce requests.
func send(t *testing.T, ctx context.Context, env *brewtest.Env, burst []brewkit.Event, opts []kgo.Opt) int64 {
	t.Helper()
	topic := env.FreshTopic(t, "ex-wire", 3)
	var written atomic.Int64
	cl, err := brewkit.NewClient(env.Config, append(slices.Clone(opts), kgo.DefaultProduceTopic(topic), kgo.WithHooks(byteCounter{&written}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var failed atomic.Value
	for _, e := range burst {
		cl.Produce(ctx, e.Record(topic), func(_ *kgo.Record, err error) {
			if err != nil {
				failed.CompareAndSwap(nil, err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatalf("producing the orders: %v", err)
	}
	if err, _ := failed.Load().(error); err != nil {
		grade.Fail(t, hintRead, "producing the orders with your options: %v", err)
	}
	end, err := brewkit.EndOffsets(ctx, kadm.NewClient(cl), topic)
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	if err := brewkit.ReadTo(ctx, env.Config, topic, nil, end, time.Minute, func(*kgo.Record) { read++ }); err != nil {
		t.Fatalf("reading the orders back: %v", err)
	}
	if read != len(burst) {
		grade.Fail(t, hintRead, "%d of the %d orders produced are on the topic", read, len(burst))
	}
	return written.Load()
}

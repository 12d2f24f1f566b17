package trickle

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const (
	rate   = 2000            // orders a second
	span   = 3 * time.Second // of the stream
	fewer  = 3               // times fewer produce requests than the defaults
	within = 250 * time.Millisecond
)

const (
	hintFewer = "at a steady rate a batch goes out when its partition has lingered long enough, however big it may grow: let each wait longer and it carries more orders per request (lecture 09: batching, linger)"
	hintSlow  = "every order waits in its batch for as long as the batch lingers: wait long enough to fill the batches, not so long that the orders are late (lecture 09: batching, linger)"
	hintAcks  = "fewer requests must not cost durability: keep acks=all and idempotence (lecture 05: acks; lecture 09: the settings you keep)"
)

// stream is what one run of the stream measured.
type stream struct {
	requests int64 // produce requests sent for the stream
	orders   int
	median   time.Duration // from Produce to the acknowledgement
	p99      time.Duration
}

// requestCounter counts the produce requests a client writes.
type requestCounter struct{ n *atomic.Int64 }

func (c requestCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == 0 && err == nil { // Produce
		c.n.Add(1)
	}
}

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := env.FreshTopic(t, "ex-trickle", 3)

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

	defaults := send(t, ctx, env.Config, topic, nil)
	yours := send(t, ctx, env.Config, topic, opts)
	t.Logf("defaults: %d requests, median %s, p99 %s; yours: %d requests, median %s, p99 %s",
		defaults.requests, defaults.median, defaults.p99, yours.requests, yours.median, yours.p99)
	if yours.requests*fewer > defaults.requests {
		if len(opts) == 0 {
			grade.Fail(t, hintFewer, "ProducerOpts returns no options, so the %d orders in %s went out in %d produce requests, as many as the defaults send; want at most %d (%d times fewer)",
				yours.orders, span, yours.requests, defaults.requests/fewer, fewer)
		}
		grade.Fail(t, hintFewer, "your options sent %d produce requests for %d orders in %s, the defaults %d: want at most %d (%d times fewer)",
			yours.requests, yours.orders, span, defaults.requests, defaults.requests/fewer, fewer)
	}
	if yours.median > within {
		grade.Fail(t, hintSlow, "half of the orders took over %s from Produce to acknowledgement (the defaults: %s); want at most %s",
			yours.median.Round(time.Millisecond), defaults.median.Round(time.Millisecond), within)
	}
}

// send produces the stream, rate orders a second for span, with opts, and
// measures it: the produce requests from the first order to the last
// acknowledgement, and each order's latency.
func send(t *testing.T, ctx context.Context, cfg brewkit.Config, topic string, opts []kgo.Opt) stream {
	t.Helper()
	var requests atomic.Int64
	cl, err := brewkit.NewClient(cfg, append(slices.Clone(opts), kgo.DefaultProduceTopic(topic), kgo.WithHooks(requestCounter{&requests}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	// One order first, so that metadata and the producer id are not what
	// the stream measures.
	if err := cl.ProduceSync(ctx, brewkit.NewOrder(rng, 0, time.Now()).Record(topic)).FirstErr(); err != nil {
		t.Fatalf("producing the first order: %v", err)
	}
	requests.Store(0)

	n := int(rate * span / time.Second)
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for i := 0; i < n; {
		due := min(n, int(time.Since(start)*rate/time.Second)+1)
		for ; i < due; i++ {
			r := brewkit.NewOrder(rng, int64(i+1), time.Now()).Record(topic)
			at, sent := i, time.Now()
			wg.Add(1)
			cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
				defer wg.Done()
				if err != nil {
					failed.CompareAndSwap(nil, err)
				}
				lat[at] = time.Since(sent)
			})
		}
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the orders were not all acknowledged within 30 s")
	}
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("producing the orders: %v", err)
	}
	slices.Sort(lat)
	return stream{requests: requests.Load(), orders: n, median: lat[n/2], p99: lat[n*99/100]}
}

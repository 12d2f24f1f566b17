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
	span   = 2 * time.Second // of the stream, in each round
	rounds = 3
	fewer  = 3 // times fewer produce requests than the defaults
	later  = 200 * time.Millisecond
	// slow is the defaults' median latency above which a round is measured
	// again (on the stand it is a few milliseconds), retries times at most.
	slow    = 100 * time.Millisecond
	retries = 4
	// inFlight is how many produce requests the measured clients may have
	// in flight per broker: enough that a broker slow to answer (this
	// machine is shared) does not hold batches back, which would make
	// them fuller and fewer whatever the settings.
	inFlight = 64
)

const (
	hintFewer = "at a steady rate a batch goes out when its partition has lingered long enough, however big it may grow: let each wait longer and it carries more orders per request (lecture 09: batching, linger)"
	hintSlow  = "every order waits in its batch for as long as the batch lingers: wait long enough to fill the batches, not so long that the orders are late (lecture 09: batching, linger)"
	hintAcks  = "fewer requests must not cost durability: keep acks=all and idempotence (lecture 05: acks and idempotence)"
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

// TestGradeAlone measures requests and latency: it holds the stand alone
// (its name says so), since another test's traffic on the same brokers
// would be in the numbers.
func TestGradeAlone(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	env.Exclusive(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
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

	// Three rounds, the defaults and yours in turn: this machine is
	// shared, and a round that stalls sends fewer requests, later.
	var most, yoursMost int64 // produce requests in a round, the highest
	var extra []time.Duration // your median latency over the defaults', per round
	for round, tries := 0, 0; round < rounds; round++ {
		defaults := send(t, ctx, env.Config, topic, nil)
		yours := send(t, ctx, env.Config, topic, opts)
		// A cluster that takes longer than slow to acknowledge the
		// defaults' orders is too busy to compare latencies with (their
		// many small requests queue up at the brokers): that round is
		// measured again, up to retries times.
		if defaults.median > slow && tries < retries {
			tries++
			t.Logf("round %d: the defaults' median was %s, over %s: the cluster is busy; measuring again", round+1, defaults.median, slow)
			round--
			continue
		}
		t.Logf("round %d: the defaults %d requests, median %s, p99 %s; yours %d requests, median %s, p99 %s", round+1,
			defaults.requests, defaults.median, defaults.p99, yours.requests, yours.median, yours.p99)
		most, yoursMost = max(most, defaults.requests), max(yoursMost, yours.requests)
		extra = append(extra, yours.median-defaults.median)
	}
	orders := int(rate * span / time.Second)
	if yoursMost*fewer > most {
		if len(opts) == 0 {
			grade.Fail(t, hintFewer, "ProducerOpts returns no options, so the %d orders of a %s round went out in up to %d produce requests, as with the defaults; want at most %d (%d times fewer)",
				orders, span, yoursMost, most/fewer, fewer)
		}
		grade.Fail(t, hintFewer, "your options sent up to %d produce requests for the %d orders of a %s round, the defaults up to %d: want at most %d (%d times fewer)",
			yoursMost, orders, span, most, most/fewer, fewer)
	}
	slices.Sort(extra)
	if mid := extra[len(extra)/2]; mid > later {
		grade.Fail(t, hintSlow, "half of the orders took %s longer from Produce to acknowledgement than with the defaults (the median of %d rounds); want at most %s longer",
			mid.Round(time.Millisecond), rounds, later)
	}
}

// send produces the stream, rate orders a second for span, with opts, and
// measures it: the produce requests from the first order to the last
// acknowledgement, and each order's latency. The client may keep inFlight
// requests in flight (which an idempotent producer may not: the options
// were checked for idempotence before).
func send(t *testing.T, ctx context.Context, cfg brewkit.Config, topic string, opts []kgo.Opt) stream {
	t.Helper()
	var requests atomic.Int64
	cl, err := brewkit.NewClient(cfg, append(slices.Clone(opts), kgo.DefaultProduceTopic(topic), kgo.WithHooks(requestCounter{&requests}),
		kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(inFlight))...)
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

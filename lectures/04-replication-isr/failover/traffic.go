package failover

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// position is where a record sits in the log.
type position struct {
	partition int32
	offset    int64
}

// tally counts every order of one run: sent, acknowledged, failed, read.
// An order stored at two positions is a duplicate in the log; a consumer that
// reads one position twice (after an offset reset) is not.
type tally struct {
	mu      sync.Mutex
	sent    int64
	acked   map[int64]bool
	failed  int64
	read    map[int64]map[position]bool
	slow    int64
	maxAck  time.Duration
	pending sync.WaitGroup
}

func newTally() *tally { return &tally{acked: map[int64]bool{}, read: map[int64]map[position]bool{}} }

func (t *tally) send() { t.mu.Lock(); t.sent++; t.mu.Unlock() }

func (t *tally) done(seq int64, took time.Duration, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.failed++
		return
	}
	t.acked[seq] = true
	if took > time.Second {
		t.slow++
	}
	t.maxAck = max(t.maxAck, took)
}

func (t *tally) ackedCount() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return int64(len(t.acked))
}

func (t *tally) got(seq int64, at position) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.read[seq] == nil {
		t.read[seq] = map[position]bool{}
	}
	t.read[seq][at] = true
}

func (t *tally) allAckedRead() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for seq := range t.acked {
		if len(t.read[seq]) == 0 {
			return false
		}
	}
	return true
}

func (t *tally) fill(r *Report) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r.Sent, r.Acked, r.Failed = t.sent, int64(len(t.acked)), t.failed
	r.Read = int64(len(t.read))
	r.Lost, r.Duplicated = 0, 0
	for seq := range t.acked {
		if len(t.read[seq]) == 0 {
			r.Lost++
		}
	}
	for _, at := range t.read {
		r.Duplicated += int64(len(at) - 1)
	}
	r.SlowAcks, r.MaxAck = t.slow, t.maxAck
}

// producer writes orders at a steady rate with acks=all and idempotence.
type producer struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	t      *tally

	mu     sync.Mutex // orders the paused check and pending.Add against pause
	paused bool
}

func startProducer(ctx context.Context, cfg brewkit.Config, c Config, run string, hook *writeWatch, t *tally) (*producer, error) {
	cl, err := brewkit.NewClient(cfg,
		kgo.RequiredAcks(kgo.AllISRAcks()), // the default, said out loud
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.WithHooks(hook),
	)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &producer{cl: cl, cancel: cancel, done: make(chan struct{}), t: t}
	go func() {
		defer close(p.done)
		rng := rand.New(rand.NewPCG(rand.Uint64(), 0))
		tick := time.NewTicker(time.Second / time.Duration(c.Rate))
		defer tick.Stop()
		var seq int64
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			p.mu.Lock()
			if p.paused {
				p.mu.Unlock()
				continue
			}
			t.pending.Add(1)
			p.mu.Unlock()
			seq++
			e := brewkit.NewOrder(rng, seq, time.Now())
			e.Seq, e.Run = seq, run
			sent, n := time.Now(), seq
			t.send()
			cl.Produce(context.Background(), e.Record(c.Topic), func(_ *kgo.Record, err error) {
				t.done(n, time.Since(sent), err)
				t.pending.Done()
			})
		}
	}()
	return p, nil
}

// pause stops new writes and waits until every write so far is answered.
func (p *producer) pause() {
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
	p.t.pending.Wait()
}

func (p *producer) resume() {
	p.mu.Lock()
	p.paused = false
	p.mu.Unlock()
}

func (p *producer) stop() {
	p.once.Do(func() {
		p.cancel()
		<-p.done
		p.t.pending.Wait()
		p.cl.Close()
	})
}

// consumer reads the drilled topic from given offsets and tallies this run's orders.
type consumer struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// startConsumer reads topic from the offsets in from; a fetch error it must
// not swallow goes to fail, and the consumer stops.
func startConsumer(ctx context.Context, cfg brewkit.Config, topic string, from kadm.ListedOffsets, run string, t *tally, fail func(error)) (*consumer, error) {
	offsets := map[int32]kgo.Offset{}
	from.Each(func(o kadm.ListedOffset) { offsets[o.Partition] = kgo.NewOffset().At(o.Offset) })
	cl, err := brewkit.NewClient(cfg, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}), kgo.KeepRetryableFetchErrors())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	c := &consumer{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer cl.Close()
		var check brewkit.FetchCheck
		for ctx.Err() == nil {
			fs, err := check.Poll(ctx, cl, 0)
			if err != nil {
				fail(err)
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				e, err := brewkit.DecodeEvent(r)
				if err == nil && e.Run == run && e.Seq > 0 {
					t.got(e.Seq, position{r.Partition, r.Offset})
				}
			})
		}
	}()
	return c, nil
}

func (c *consumer) stop() {
	c.once.Do(func() { c.cancel(); <-c.done })
}

// probeResult is one write to one partition with given acks.
type probeResult struct {
	offset int64
	err    string
}

func (p probeResult) String() string {
	if p.err != "" {
		return p.err
	}
	return fmt.Sprintf("written at offset %d", p.offset)
}

// probe writes one order to partition with acks, retrying a few times, and
// reports where it landed or the error Kafka gave. It writes without
// idempotence: an idempotent producer first asks for a producer id, which a
// cluster that lost its controller quorum may not be able to hand out, and the
// probe is about the ISR rule alone.
func probe(ctx context.Context, cfg brewkit.Config, topic string, partition int32, acks kgo.Acks, run string) probeResult {
	opts := []kgo.Opt{
		kgo.RequiredAcks(acks),
		kgo.DisableIdempotentWrite(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordRetries(3),
		kgo.RecordDeliveryTimeout(15 * time.Second),
	}
	res := probeResult{offset: -1}
	cl, err := brewkit.NewClient(cfg, opts...)
	if err != nil {
		res.err = err.Error()
		return res
	}
	defer cl.Close()
	e := brewkit.NewOrder(rand.New(rand.NewPCG(1, 1)), 0, time.Now())
	e.Run = run
	r := e.Record(topic)
	r.Partition = partition
	pr := cl.ProduceSync(ctx, r)
	if err := pr.FirstErr(); err != nil {
		res.err = err.Error()
		return res
	}
	res.offset = pr[0].Record.Offset
	return res
}

// Package bench measures franz-go with every producer and consumer knob that
// matters: acks, idempotence, linger, batch size, requests in flight,
// compression, partitions, and producers and consumers in parallel. It writes
// a fresh topic, then reads it back, and reports records/s, MiB/s, latency
// from send to acknowledgement, and the process's CPU per million records.
package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/09-clients-throughput/perf"
)

// Config is one benchmark.
type Config struct {
	perf.Workload
	Acks        string // all, 1 or 0
	Idempotent  bool
	MaxInflight int // produce requests in flight per broker
	Producers   int
	Consumers   int
	// Partitioner is how records without a key spread: sticky (franz-go's
	// default: fill one partition's batch, then the next) or roundrobin
	// (record by record, as kafka-go does).
	Partitioner string
	// E2ERate, when above 0, adds an end-to-end phase: records at this rate
	// for E2EFor while a consumer reads them, each carrying its send time.
	E2ERate int
	E2EFor  time.Duration
}

// Defaults: the compare workload with franz-go's defaults for the rest.
var Defaults = Config{
	Workload:    perf.Workload{Records: 200_000, Size: 256, Partitions: 3, Linger: 5 * time.Millisecond, BatchBytes: 256 << 10, Compression: "lz4"},
	Acks:        "all",
	Idempotent:  true,
	MaxInflight: 5,
	Producers:   1,
	Consumers:   1,
	Partitioner: "sticky",
	E2EFor:      5 * time.Second,
}

// Check says what is wrong with c, if anything.
func (c Config) Check() error {
	switch {
	case c.Acks != "all" && c.Acks != "1" && c.Acks != "0":
		return fmt.Errorf("acks %q: use all, 1 or 0", c.Acks)
	case c.Idempotent && c.Acks != "all":
		return fmt.Errorf("idempotence needs acks=all")
	case c.Partitioner != "sticky" && c.Partitioner != "roundrobin":
		return fmt.Errorf("partitioner %q: use sticky or roundrobin", c.Partitioner)
	case c.Idempotent && c.MaxInflight != 5:
		return fmt.Errorf("an idempotent franz-go producer keeps 5 requests in flight per broker; to change it, turn idempotence off")
	}
	_, err := perf.Codec(c.Compression)
	return err
}

// Effective is the configuration as the client runs it.
func (c Config) Effective() string {
	return fmt.Sprintf("records=%d size=%dB partitions=%d acks=%s idempotent=%v linger=%s batch=%dB in-flight=%d compression=%s partitioner=%s producers=%d consumers=%d",
		c.Records, c.Size, c.Partitions, c.Acks, c.Idempotent, c.Linger, c.BatchBytes, c.MaxInflight, c.Compression, c.Partitioner, c.Producers, c.Consumers)
}

// Result is a run.
type Result struct {
	Config  Config     `json:"config"`
	Produce perf.Phase `json:"produce"`
	Consume perf.Phase `json:"consume"`
	// Ratio is the batches' uncompressed size over their size on the wire.
	Ratio float64 `json:"compression_ratio"`
	// EndToEnd is the end-to-end phase: latency from send to receipt.
	EndToEnd *perf.Phase `json:"end_to_end,omitempty"`
}

// Run writes and reads a fresh topic as c says.
func Run(ctx context.Context, cfg brewkit.Config, c Config) (Result, error) {
	res := Result{Config: c}
	if err := c.Check(); err != nil {
		return res, err
	}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.bench.", Partitions: c.Partitions})
	if err != nil {
		return res, err
	}
	defer drop(ctx) //nolint:errcheck // leftovers are harmless

	if res.Produce, res.Ratio, err = produce(ctx, cfg, c, topic); err != nil {
		return res, err
	}
	if res.Consume, err = consume(ctx, cfg, c, topic); err != nil || c.E2ERate <= 0 {
		return res, err
	}
	e2e, err := endToEnd(ctx, cfg, c, adm)
	res.EndToEnd = &e2e
	return res, err
}

// endToEnd writes records at c.E2ERate to a fresh topic while a consumer
// reads it; each value starts with its send time (Unix nanoseconds), and the
// latency is from that to the consumer's receipt: the path a record takes
// through the producer, the leader, replication (acks=all) and the fetch.
func endToEnd(ctx context.Context, cfg brewkit.Config, c Config, adm *kadm.Client) (perf.Phase, error) {
	n := max(1, int(float64(c.E2ERate)*c.E2EFor.Seconds()))
	ph := perf.Phase{Records: n}
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.bench.e2e.", Partitions: c.Partitions})
	if err != nil {
		return ph, err
	}
	defer drop(ctx) //nolint:errcheck // leftovers are harmless
	if _, err := brewkit.EndOffsets(ctx, adm, topic); err != nil {
		return ph, err
	}
	cons, err := brewkit.NewClient(cfg, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(100*time.Millisecond), kgo.KeepRetryableFetchErrors())
	if err != nil {
		return ph, err
	}
	defer cons.Close()
	prod, err := brewkit.NewClient(cfg, producerOpts(c)...)
	if err != nil {
		return ph, err
	}
	defer prod.Close()

	cctx, cancel := context.WithTimeout(ctx, c.E2EFor+time.Minute)
	defer cancel()
	lat := make([]time.Duration, 0, n)
	done := make(chan error, 1)
	go func() {
		var check brewkit.FetchCheck
		for len(lat) < n {
			fs, err := check.Poll(cctx, cons, 0)
			if cctx.Err() != nil {
				done <- fmt.Errorf("end to end: read %d of %d: %w", len(lat), n, cctx.Err())
				return
			}
			if err != nil {
				done <- fmt.Errorf("end to end: read %d of %d: %w", len(lat), n, err)
				return
			}
			now := time.Now()
			fs.EachRecord(func(r *kgo.Record) {
				if len(r.Value) >= 8 {
					lat = append(lat, now.Sub(time.Unix(0, int64(binary.BigEndian.Uint64(r.Value)))))
				}
			})
		}
		done <- nil
	}()
	values := perf.Payloads(max(c.Size, 8))
	bar := perf.NewBar(n, "end to end")
	defer bar.Done()
	tick := time.NewTicker(time.Second / time.Duration(c.E2ERate))
	defer tick.Stop()
	start := time.Now()
	for i := range n {
		select {
		case <-tick.C:
		case <-cctx.Done():
			return ph, cctx.Err()
		}
		v := append([]byte(nil), values[i%len(values)]...)
		binary.BigEndian.PutUint64(v, uint64(time.Now().UnixNano()))
		prod.Produce(cctx, &kgo.Record{Topic: topic, Value: v}, nil)
		bar.Add(1)
	}
	if err := <-done; err != nil {
		return ph, err
	}
	ph.Elapsed = time.Since(start)
	ph.Latencies(lat)
	ph.Finish(c.Size)
	return ph, nil
}

func producerOpts(c Config) []kgo.Opt {
	codec, _ := perf.Codec(c.Compression)
	acks := map[string]kgo.Acks{"all": kgo.AllISRAcks(), "1": kgo.LeaderAck(), "0": kgo.NoAck()}[c.Acks]
	opts := []kgo.Opt{
		kgo.RequiredAcks(acks),
		kgo.ProducerLinger(c.Linger),
		kgo.ProducerBatchMaxBytes(int32(c.BatchBytes)),
		kgo.ProducerBatchCompression(codec),
		kgo.MaxBufferedRecords(100_000),
	}
	if c.Partitioner == "roundrobin" {
		opts = append(opts, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	}
	if !c.Idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(c.MaxInflight))
	}
	return opts
}

// batchSizes adds up the batches a producer wrote, before and after compression.
type batchSizes struct {
	mu                       sync.Mutex
	uncompressed, compressed int64
}

func (b *batchSizes) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.ProduceBatchMetrics) {
	b.mu.Lock()
	b.uncompressed += int64(m.UncompressedBytes)
	b.compressed += int64(m.CompressedBytes)
	b.mu.Unlock()
}

func produce(ctx context.Context, cfg brewkit.Config, c Config, topic string) (perf.Phase, float64, error) {
	ph := perf.Phase{Records: c.Records}
	var sizes batchSizes
	values := perf.Payloads(c.Size)
	bar := perf.NewBar(c.Records, "produce")
	defer bar.Done()
	var mu sync.Mutex
	lat := make([]time.Duration, 0, c.Records)
	var firstErr error
	clients := make([]*kgo.Client, c.Producers)
	for i := range clients {
		cl, err := brewkit.NewClient(cfg, append(producerOpts(c), kgo.WithHooks(&sizes))...)
		if err != nil {
			return ph, 0, err
		}
		defer cl.Close()
		clients[i] = cl
	}
	cpu, start := perf.ProcessCPU(), time.Now()
	var wg sync.WaitGroup
	for i, cl := range clients {
		n := c.Records / c.Producers
		if i == 0 {
			n += c.Records % c.Producers
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := perf.Send(ctx, cl, topic, values, perf.Workload{Records: n}, bar)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			lat = append(lat, l...)
		}()
	}
	wg.Wait()
	ph.Elapsed, ph.CPU = time.Since(start), perf.ProcessCPU()-cpu
	if firstErr != nil {
		return ph, 0, fmt.Errorf("producing: %w", firstErr)
	}
	ph.Latencies(lat)
	ph.Finish(c.Size)
	ratio := 0.0
	sizes.mu.Lock()
	if sizes.compressed > 0 {
		ratio = float64(sizes.uncompressed) / float64(sizes.compressed)
	}
	sizes.mu.Unlock()
	return ph, ratio, nil
}

func consume(ctx context.Context, cfg brewkit.Config, c Config, topic string) (perf.Phase, error) {
	ph := perf.Phase{Records: c.Records}
	bar := perf.NewBar(c.Records, "consume")
	defer bar.Done()
	// Each consumer reads its own share of the partitions, from the start.
	assign := make([]map[int32]kgo.Offset, c.Consumers)
	for p := range c.Partitions {
		i := int(p) % c.Consumers
		if assign[i] == nil {
			assign[i] = map[int32]kgo.Offset{}
		}
		assign[i][p] = kgo.NewOffset().AtStart()
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var mu sync.Mutex
	read := 0
	var firstErr error
	var wg sync.WaitGroup
	cpu, start := perf.ProcessCPU(), time.Now()
	for _, parts := range assign {
		if parts == nil {
			continue // more consumers than partitions: this one idles
		}
		cl, err := brewkit.NewClient(cfg, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}), kgo.KeepRetryableFetchErrors())
		if err != nil {
			return ph, err
		}
		defer cl.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			var check brewkit.FetchCheck
			for {
				fs, err := check.Poll(cctx, cl, 0)
				if cctx.Err() != nil {
					return
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
					return
				}
				n := fs.NumRecords()
				bar.Add(n)
				mu.Lock()
				read += n
				if read >= c.Records {
					cancel()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	ph.Elapsed, ph.CPU = time.Since(start), perf.ProcessCPU()-cpu
	switch {
	case firstErr != nil:
		return ph, fmt.Errorf("consuming: read %d of %d records: %w", read, c.Records, firstErr)
	case read < c.Records:
		return ph, fmt.Errorf("consumed %d of %d records within 5 minutes", read, c.Records)
	}
	ph.Records = read
	ph.Finish(c.Size)
	return ph, nil
}

// Print writes the result.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "franz-go: %s\n\n", r.Config.Effective())
	t := brewkit.NewTable(w, "PHASE", "RECORDS", "RECORDS/S", "MIB/S", "P50", "P99", "MAX", "CPU S/M")
	for _, p := range []struct {
		name string
		ph   perf.Phase
	}{{"produce", r.Produce}, {"consume", r.Consume}} {
		lat := func(d time.Duration) string {
			if p.name == "consume" {
				return "-"
			}
			return d.Round(100 * time.Microsecond).String()
		}
		t.Row(p.name, p.ph.Records, fmt.Sprintf("%.0f", p.ph.PerSec), fmt.Sprintf("%.1f", p.ph.MiBPerSec),
			lat(p.ph.P50), lat(p.ph.P99), lat(p.ph.Max), fmt.Sprintf("%.2f", p.ph.CPUPerMillion().Seconds()))
	}
	t.Flush()
	fmt.Fprintf(w, "compression ratio on the wire: %.2f\n", r.Ratio)
	if e := r.EndToEnd; e != nil {
		fmt.Fprintf(w, "end to end at %d records/s for %s: p50 %s, p99 %s, max %s\n", r.Config.E2ERate, r.Config.E2EFor,
			e.P50.Round(100*time.Microsecond), e.P99.Round(100*time.Microsecond), e.Max.Round(100*time.Microsecond))
	}
}

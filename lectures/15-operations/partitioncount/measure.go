// Package partitions chooses a partition count for Brew's topics from
// measured numbers: what one partition takes from a producer (acks=all, RF
// 3) and what one consumer reads from it, against each topic's peak rate,
// its consumers' processing time and the parallelism its team wants. It
// also counts what growing a topic costs: the keys that move to another
// partition under the default partitioner.
package partitioncount

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Options says how long and with what records Measure measures.
type Options struct {
	// Duration is how long the producer writes; the consumer then reads
	// everything it wrote.
	Duration time.Duration
	// RecordBytes is each record's value: an OrderPlaced event's JSON,
	// padded with spaces (still valid JSON) to this size.
	RecordBytes int
	// MaxRecords stops the producer early: a fast cluster (or the
	// in-process simulation, which keeps every record in memory) would
	// otherwise take gigabytes in -duration.
	MaxRecords int64
	// Progress, when set, is told what the measurement does, about once a second.
	Progress func(string)
}

// Defaults are the measurement of `make partition-count`.
var Defaults = Options{Duration: 5 * time.Second, RecordBytes: 300, MaxRecords: 400_000}

// TopicPrefix starts the name of the topic Measure creates (and deletes).
const TopicPrefix = "brew.ops.partitions."

// Rate is a count of records and their bytes (key and value) over a time.
type Rate struct {
	Records int64
	Bytes   int64
	Elapsed time.Duration
}

// PerSecond is records a second.
func (r Rate) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Records) / r.Elapsed.Seconds()
}

// MBPerSecond is megabytes (10^6 bytes) a second.
func (r Rate) MBPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Bytes) / 1e6 / r.Elapsed.Seconds()
}

// Measured is what one partition took and gave.
type Measured struct {
	Topic       string // the fresh topic measured on: 1 partition, RF 3
	RF          int16
	Brokers     int // the brokers of the cluster, which partition counts should spread over
	RecordBytes int
	Produce     Rate // one producer, acks=all, idempotent: records acknowledged
	Consume     Rate // one consumer reading them all from the start
	Simulated   bool // measured on the embedded simulation
}

// Measure creates a fresh topic of one partition on three replicas, writes
// order events to it for o.Duration with acks=all, reads them all back with
// one consumer, and deletes the topic.
func Measure(ctx context.Context, cfg brewkit.Config, o Options) (Measured, error) {
	progress := o.Progress
	if progress == nil {
		progress = func(string) {}
	}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return Measured{}, err
	}
	defer cl.Close()
	m := Measured{RF: 3, RecordBytes: o.RecordBytes}
	m.Simulated, _ = brewkit.IsSimulated(ctx, cl)
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return m, fmt.Errorf("listing the brokers: %w", err)
	}
	m.Brokers = len(meta.Brokers)
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: TopicPrefix, Partitions: 1, RF: m.RF})
	if err != nil {
		return m, err
	}
	defer drop(ctx) //nolint:errcheck // best effort: the topic keeps an hour at most
	m.Topic = topic

	progress(fmt.Sprintf("producing %d-byte order events to %s (1 partition, RF %d, acks=all) for %s or %d records",
		o.RecordBytes, topic, m.RF, o.Duration, o.MaxRecords))
	if m.Produce, err = produce(ctx, cfg, cl, topic, o, progress); err != nil {
		return m, err
	}
	progress(fmt.Sprintf("reading the %d records back with one consumer", m.Produce.Records))
	if m.Consume, err = consume(ctx, cfg, topic, m.Produce.Records, cfg.Bound(), o.Duration); err != nil {
		return m, err
	}
	return m, nil
}

// values are order events padded to size bytes, a pool the producer cycles
// through so that encoding JSON does not limit what it measures.
func values(size int) [][]byte {
	rng := rand.New(rand.NewPCG(15, 15))
	at := time.Date(2026, 6, 5, 12, 0, 0, 0, time.UTC)
	out := make([][]byte, 1024)
	for i := range out {
		v, _ := json.Marshal(brewkit.NewOrder(rng, int64(i+1), at)) // an Event always marshals
		if pad := size - len(v); pad > 0 {
			v = append(v, bytes.Repeat([]byte(" "), pad)...)
		}
		out[i] = v
	}
	return out
}

// produce writes for o.Duration (or o.MaxRecords) and waits for every acknowledgement. The
// rate counts the records acknowledged over the time from the first send
// to the last acknowledgement.
func produce(ctx context.Context, cfg brewkit.Config, cl *kgo.Client, topic string, o Options, progress func(string)) (Rate, error) {
	vals := values(o.RecordBytes)
	var acked, nbytes atomic.Int64
	var once sync.Once
	var failed error
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	done := func(r *kgo.Record, err error) {
		if err != nil {
			once.Do(func() { failed = err; stop() })
			return
		}
		acked.Add(1)
		nbytes.Add(int64(len(r.Key) + len(r.Value)))
	}

	start := time.Now()
	deadline := start.Add(o.Duration)
	tick := start.Add(time.Second)
	for n := int64(1); pctx.Err() == nil && (o.MaxRecords <= 0 || n <= o.MaxRecords); n++ {
		now := time.Now()
		if !now.Before(deadline) {
			break
		}
		if now.After(tick) {
			progress(fmt.Sprintf("  %s: %d records acknowledged", now.Sub(start).Round(time.Second), acked.Load()))
			tick = tick.Add(time.Second)
		}
		cl.Produce(pctx, &kgo.Record{Topic: topic, Key: []byte(brewkit.OrderID(n)), Value: vals[n%int64(len(vals))]}, done)
	}
	fctx, cancel := context.WithTimeout(ctx, cfg.Bound())
	defer cancel()
	flushErr := cl.Flush(fctx)
	elapsed := time.Since(start)
	once.Do(func() {}) // returns after a failure's Do: failed is safe to read
	switch {
	case failed != nil && ctx.Err() == nil:
		return Rate{}, fmt.Errorf("producing to %s: %w", topic, failed)
	case ctx.Err() != nil:
		return Rate{}, ctx.Err()
	case flushErr != nil:
		return Rate{}, fmt.Errorf("producing to %s: not every record acknowledged within %s: %w", topic, cfg.Bound(), flushErr)
	}
	if acked.Load() == 0 {
		return Rate{}, fmt.Errorf("producing to %s: no record acknowledged in %s", topic, elapsed.Round(time.Millisecond))
	}
	return Rate{Records: acked.Load(), Bytes: nbytes.Load(), Elapsed: elapsed}, nil
}

// consume reads want records of the topic's partition 0 from the start with
// one consumer, within bound plus the producer's time (reading takes about
// as long as writing did). The rate runs from the first poll to the last
// record.
func consume(ctx context.Context, cfg brewkit.Config, topic string, want int64, bound, producing time.Duration) (Rate, error) {
	limit := bound + producing
	cl, err := brewkit.NewClient(cfg, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {0: kgo.NewOffset().AtStart()},
	}))
	if err != nil {
		return Rate{}, err
	}
	defer cl.Close()
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var r Rate
	start := time.Now()
	for r.Records < want {
		fs := cl.PollFetches(cctx)
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		if cctx.Err() != nil {
			return r, fmt.Errorf("reading %s back: %d of %d records within %s (the bound, %s, plus the %s of writing)", topic, r.Records, want, limit, bound, producing)
		}
		for _, e := range fs.Errors() {
			return r, fmt.Errorf("reading %s back: %w", topic, e.Err)
		}
		fs.EachRecord(func(rec *kgo.Record) {
			r.Records++
			r.Bytes += int64(len(rec.Key) + len(rec.Value))
		})
	}
	r.Elapsed = time.Since(start)
	return r, nil
}

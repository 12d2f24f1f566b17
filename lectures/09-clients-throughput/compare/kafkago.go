package compare

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/09-clients-throughput/perf"
)

// KafkaGo is segmentio/kafka-go.
type KafkaGo struct{}

func (KafkaGo) Name() string { return "kafka-go" }

func (KafkaGo) Settings(w perf.Workload) string {
	return fmt.Sprintf("acks=all, no idempotence (not supported) batch=%s/%dB %s", w.Linger, w.BatchBytes, w.Compression)
}

var kafkaGoCodecs = map[string]compress.Compression{
	"none": 0, "gzip": compress.Gzip, "snappy": compress.Snappy, "lz4": compress.Lz4, "zstd": compress.Zstd,
}

func (KafkaGo) Produce(ctx context.Context, cfg brewkit.Config, topic string, w perf.Workload, bar *perf.Bar) (perf.Phase, error) {
	codec, ok := kafkaGoCodecs[w.Compression]
	if !ok {
		return perf.Phase{}, fmt.Errorf("unknown compression %q", w.Compression)
	}
	var mu sync.Mutex
	lat := make([]time.Duration, 0, w.Records)
	var firstErr error
	var acked sync.WaitGroup
	acked.Add(w.Records)
	wr := &kafka.Writer{
		Addr:         kafka.TCP(cfg.Brokers...),
		Topic:        topic,
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: w.Linger,
		BatchBytes:   int64(w.BatchBytes),
		BatchSize:    w.BatchBytes/max(w.Size, 1) + 1, // a count limit high enough for the byte limit to apply
		Compression:  codec,
		Async:        true,
		// A transport of its own: kafka-go's shared default caches metadata
		// for 6 s and refuses a topic created since with UNKNOWN_TOPIC.
		Transport: &kafka.Transport{ClientID: "brew-course"},
		Completion: func(msgs []kafka.Message, err error) {
			mu.Lock()
			for _, m := range msgs {
				perf.Sample(&lat, m.WriterData.(perf.Sent))
			}
			if err != nil && firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
			bar.Add(len(msgs))
			acked.Add(-len(msgs))
		},
	}
	// kafka-go's writer gives up on a topic a broker does not know yet: wait
	// until every broker's metadata has the new topic with its leaders.
	if err := kafkaGoKnows(ctx, cfg.Brokers, topic, int(w.Partitions)); err != nil {
		return perf.Phase{}, err
	}
	values := perf.Payloads(w.Size)
	ph := perf.Phase{Records: w.Records}
	cpu, start := perf.ProcessCPU(), time.Now()
	pace := perf.Pacer(w.Rate)
	for i := range w.Records {
		if err := pace(ctx, i); err != nil {
			wr.Close()
			return ph, err
		}
		if err := wr.WriteMessages(ctx, kafka.Message{Value: values[i%len(values)], WriterData: w.Stamp(i)}); err != nil {
			wr.Close()
			return ph, fmt.Errorf("kafka-go: %w", err)
		}
	}
	acked.Wait()
	ph.Elapsed, ph.CPU = time.Since(start), perf.ProcessCPU()-cpu
	if err := wr.Close(); err != nil && firstErr == nil {
		firstErr = err
	}
	if firstErr != nil {
		return ph, fmt.Errorf("kafka-go: %w", firstErr)
	}
	ph.Latencies(lat)
	ph.Finish(w.Size)
	return ph, nil
}

func (KafkaGo) Consume(ctx context.Context, cfg brewkit.Config, topic string, w perf.Workload, bar *perf.Bar) (perf.Phase, error) {
	ph := perf.Phase{Records: w.Records}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	msgs := make(chan int, 1024)
	errs := make(chan error, w.Partitions)
	var readers sync.WaitGroup
	cpu, start := perf.ProcessCPU(), time.Now()
	for p := range w.Partitions {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: cfg.Brokers, Topic: topic, Partition: int(p), MinBytes: 1, MaxBytes: 50 << 20})
		if err := r.SetOffset(kafka.FirstOffset); err != nil {
			return ph, fmt.Errorf("kafka-go: %w", err)
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			defer r.Close()
			for {
				if _, err := r.ReadMessage(cctx); err != nil {
					if cctx.Err() == nil {
						errs <- err
					}
					return
				}
				select {
				case msgs <- 1:
				case <-cctx.Done():
					return
				}
			}
		}()
	}
	defer readers.Wait()
	defer cancel()
	idle := time.NewTimer(cfg.Bound()) // reset by every record
	defer idle.Stop()
	for n := 0; n < w.Records; n++ {
		select {
		case <-msgs:
			bar.Add(1)
			idle.Reset(cfg.Bound())
		case <-idle.C:
			return ph, stalled("kafka-go", cfg, n, w.Records)
		case err := <-errs:
			return ph, fmt.Errorf("kafka-go: %w", err)
		case <-ctx.Done():
			return ph, fmt.Errorf("kafka-go: read %d of %d: %w", n, w.Records, ctx.Err())
		}
	}
	ph.Elapsed, ph.CPU = time.Since(start), perf.ProcessCPU()-cpu
	ph.Finish(w.Size)
	return ph, nil
}

func kafkaGoKnows(ctx context.Context, brokers []string, topic string, partitions int) error {
	knows := func(addr string) bool {
		mctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		resp, err := (&kafka.Client{Addr: kafka.TCP(addr)}).Metadata(mctx, &kafka.MetadataRequest{Topics: []string{topic}})
		if err != nil || len(resp.Topics) != 1 || resp.Topics[0].Error != nil || len(resp.Topics[0].Partitions) != partitions {
			return false
		}
		for _, p := range resp.Topics[0].Partitions {
			if p.Error != nil || p.Leader.ID < 0 {
				return false
			}
		}
		return true
	}
	return brewkit.WaitFor(ctx, 10*time.Second, 50*time.Millisecond, func() bool {
		for _, b := range brokers {
			if !knows(b) {
				return false
			}
		}
		return true
	})
}

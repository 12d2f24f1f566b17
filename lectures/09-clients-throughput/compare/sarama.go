package compare

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/09-clients-throughput/perf"
)

// Sarama is IBM/sarama.
type Sarama struct{}

func (Sarama) Name() string { return "sarama" }

func (Sarama) Settings(w perf.Workload) string {
	return fmt.Sprintf("acks=all idempotent (1 request in flight, its rule) flush=%s/%dB %s", w.Linger, w.BatchBytes, w.Compression)
}

var saramaCodecs = map[string]sarama.CompressionCodec{
	"none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP, "snappy": sarama.CompressionSnappy,
	"lz4": sarama.CompressionLZ4, "zstd": sarama.CompressionZSTD,
}

func saramaConfig(w perf.Workload) (*sarama.Config, error) {
	c := sarama.NewConfig()
	c.Version = sarama.V4_0_0_0
	c.ClientID = "brew-course"
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Idempotent = true
	c.Net.MaxOpenRequests = 1 // sarama refuses idempotence with more
	c.Producer.Flush.Frequency = w.Linger
	c.Producer.Flush.Bytes = w.BatchBytes
	c.Producer.MaxMessageBytes = max(c.Producer.MaxMessageBytes, w.BatchBytes)
	codec, ok := saramaCodecs[w.Compression]
	if !ok {
		return nil, fmt.Errorf("unknown compression %q", w.Compression)
	}
	c.Producer.Compression = codec
	c.Producer.Return.Successes = true
	c.Consumer.Offsets.Initial = sarama.OffsetOldest
	return c, c.Validate()
}

func (Sarama) Produce(ctx context.Context, cfg brewkit.Config, topic string, w perf.Workload, bar *perf.Bar) (perf.Phase, error) {
	c, err := saramaConfig(w)
	if err != nil {
		return perf.Phase{}, err
	}
	p, err := sarama.NewAsyncProducer(cfg.Brokers, c)
	if err != nil {
		return perf.Phase{}, fmt.Errorf("sarama: %w", err)
	}
	values := perf.Payloads(w.Size)
	ph := perf.Phase{Records: w.Records}
	lat := make([]time.Duration, 0, w.Records)
	var firstErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; n < w.Records; n++ {
			select {
			case m := <-p.Successes():
				perf.Sample(&lat, m.Metadata.(perf.Sent))
			case e := <-p.Errors():
				if firstErr == nil {
					firstErr = e.Err
				}
			}
			bar.Add(1)
		}
	}()
	cpu, start := perf.ProcessCPU(), time.Now()
	pace := perf.Pacer(w.Rate)
	for i := range w.Records {
		if err := pace(ctx, i); err != nil {
			p.AsyncClose()
			return ph, err
		}
		p.Input() <- &sarama.ProducerMessage{Topic: topic, Value: sarama.ByteEncoder(values[i%len(values)]), Metadata: w.Stamp(i)}
	}
	wg.Wait()
	ph.Elapsed, ph.CPU = time.Since(start), perf.ProcessCPU()-cpu
	if err := p.Close(); err != nil && firstErr == nil {
		firstErr = err
	}
	if firstErr != nil {
		return ph, fmt.Errorf("sarama: %w", firstErr)
	}
	ph.Latencies(lat)
	ph.Finish(w.Size)
	return ph, nil
}

func (Sarama) Consume(ctx context.Context, cfg brewkit.Config, topic string, w perf.Workload, bar *perf.Bar) (perf.Phase, error) {
	c, err := saramaConfig(w)
	if err != nil {
		return perf.Phase{}, err
	}
	consumer, err := sarama.NewConsumer(cfg.Brokers, c)
	if err != nil {
		return perf.Phase{}, fmt.Errorf("sarama: %w", err)
	}
	defer consumer.Close()
	ph := perf.Phase{Records: w.Records}
	cpu, start := perf.ProcessCPU(), time.Now()
	msgs := make(chan int, 1024)
	done := make(chan struct{})
	defer close(done)
	for p := range w.Partitions {
		pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			return ph, fmt.Errorf("sarama: partition %d: %w", p, err)
		}
		defer pc.Close()
		go func() {
			for range pc.Messages() {
				select {
				case msgs <- 1:
				case <-done:
					return
				}
			}
		}()
	}
	idle := time.NewTimer(cfg.Bound()) // reset by every record
	defer idle.Stop()
	for n := 0; n < w.Records; n++ {
		select {
		case <-msgs:
			bar.Add(1)
			idle.Reset(cfg.Bound())
		case <-idle.C:
			return ph, stalled("sarama", cfg, n, w.Records)
		case <-ctx.Done():
			return ph, fmt.Errorf("sarama: read %d of %d: %w", n, w.Records, ctx.Err())
		}
	}
	ph.Elapsed, ph.CPU = time.Since(start), perf.ProcessCPU()-cpu
	ph.Finish(w.Size)
	return ph, nil
}

package compare

import (
	"context"
	"fmt"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/09-clients-throughput/perf"
)

// Confluent is confluent-kafka-go: librdkafka (C) through cgo, linked from
// the static bundle the module ships.
type Confluent struct{}

func (Confluent) Name() string { return "confluent-kafka-go" }

func (Confluent) Settings(w perf.Workload) string {
	return fmt.Sprintf("acks=all enable.idempotence=true linger.ms=%d batch.size=%d compression.type=%s (librdkafka %s)",
		w.Linger.Milliseconds(), w.BatchBytes, w.Compression, librdkafka())
}

func librdkafka() string {
	_, v := ckafka.LibraryVersion()
	return v
}

func (Confluent) Produce(ctx context.Context, cfg brewkit.Config, topic string, w perf.Workload, bar *perf.Bar) (perf.Phase, error) {
	p, err := ckafka.NewProducer(&ckafka.ConfigMap{
		"bootstrap.servers":            cfg.Bootstrap(),
		"client.id":                    "brew-course",
		"acks":                         "all",
		"enable.idempotence":           true,
		"linger.ms":                    int(w.Linger.Milliseconds()),
		"batch.size":                   w.BatchBytes,
		"compression.type":             w.Compression,
		"queue.buffering.max.messages": 1_000_000,
		"go.delivery.report.fields":    "none",
	})
	if err != nil {
		return perf.Phase{}, fmt.Errorf("confluent-kafka-go: %w", err)
	}
	defer p.Close()
	values := perf.Payloads(w.Size)
	ph := perf.Phase{Records: w.Records}
	lat := make([]time.Duration, 0, w.Records)
	done := make(chan error, 1)
	go func() {
		var firstErr error
		for n := 0; n < w.Records; {
			switch e := (<-p.Events()).(type) {
			case *ckafka.Message:
				if e.TopicPartition.Error != nil && firstErr == nil {
					firstErr = e.TopicPartition.Error
				}
				perf.Sample(&lat, e.Opaque.(perf.Sent))
				n++
				bar.Add(1)
			case ckafka.Error:
				if e.IsFatal() && firstErr == nil {
					firstErr = e
				}
			}
		}
		done <- firstErr
	}()
	cpu, start := perf.ProcessCPU(), time.Now()
	pace := perf.Pacer(w.Rate)
	for i := range w.Records {
		if err := pace(ctx, i); err != nil {
			return ph, err
		}
		msg := &ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &topic, Partition: ckafka.PartitionAny}, Value: values[i%len(values)], Opaque: w.Stamp(i)}
		for {
			err := p.Produce(msg, nil)
			if err == nil {
				break
			}
			if kerr, ok := err.(ckafka.Error); ok && kerr.Code() == ckafka.ErrQueueFull {
				p.Flush(10) // the local queue is full: let it drain a little
				continue
			}
			return ph, fmt.Errorf("confluent-kafka-go: %w", err)
		}
	}
	select {
	case err = <-done:
	case <-ctx.Done():
		return ph, ctx.Err()
	}
	ph.Elapsed, ph.CPU = time.Since(start), perf.ProcessCPU()-cpu
	if err != nil {
		return ph, fmt.Errorf("confluent-kafka-go: %w", err)
	}
	ph.Latencies(lat)
	ph.Finish(w.Size)
	return ph, nil
}

func (Confluent) Consume(ctx context.Context, cfg brewkit.Config, topic string, w perf.Workload, bar *perf.Bar) (perf.Phase, error) {
	c, err := ckafka.NewConsumer(&ckafka.ConfigMap{
		"bootstrap.servers":  cfg.Bootstrap(),
		"client.id":          "brew-course",
		"group.id":           topic + ".confluent", // librdkafka wants one; partitions are assigned, not subscribed
		"enable.auto.commit": false,
	})
	if err != nil {
		return perf.Phase{}, fmt.Errorf("confluent-kafka-go: %w", err)
	}
	defer c.Close()
	var parts []ckafka.TopicPartition
	for p := range w.Partitions {
		parts = append(parts, ckafka.TopicPartition{Topic: &topic, Partition: p, Offset: ckafka.OffsetBeginning})
	}
	ph := perf.Phase{Records: w.Records}
	cpu, start := perf.ProcessCPU(), time.Now()
	if err := c.Assign(parts); err != nil {
		return ph, fmt.Errorf("confluent-kafka-go: %w", err)
	}
	last := time.Now() // the last record, or the start
	for n := 0; n < w.Records; {
		if ctx.Err() != nil {
			return ph, fmt.Errorf("confluent-kafka-go: read %d of %d: %w", n, w.Records, ctx.Err())
		}
		if time.Since(last) > cfg.Bound() {
			return ph, stalled("confluent-kafka-go", cfg, n, w.Records)
		}
		switch e := c.Poll(100).(type) {
		case *ckafka.Message:
			if e.TopicPartition.Error != nil {
				return ph, fmt.Errorf("confluent-kafka-go: %w", e.TopicPartition.Error)
			}
			n++
			last = time.Now()
			bar.Add(1)
		case ckafka.Error:
			if e.IsFatal() {
				return ph, fmt.Errorf("confluent-kafka-go: %w", e)
			}
		}
	}
	ph.Elapsed, ph.CPU = time.Since(start), perf.ProcessCPU()-cpu
	ph.Finish(w.Size)
	return ph, nil
}

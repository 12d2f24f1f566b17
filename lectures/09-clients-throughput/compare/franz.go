package compare

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/09-clients-throughput/perf"
)

// Franz is franz-go (kgo). AsKafkaGo runs it the way kafka-go writes: no
// idempotence and records spread round-robin; it is not in the default
// comparison, where every client gets the same settings, but it answers why
// kafka-go can produce faster.
type Franz struct{ AsKafkaGo bool }

func (f Franz) Name() string {
	if f.AsKafkaGo {
		return "franz-go-as-kafka-go"
	}
	return "franz-go"
}

func (f Franz) Settings(w perf.Workload) string {
	if f.AsKafkaGo {
		return fmt.Sprintf("acks=all, no idempotence, round-robin partitioner, linger=%s batch=%d %s", w.Linger, w.BatchBytes, w.Compression)
	}
	return fmt.Sprintf("acks=all idempotent linger=%s batch=%d %s", w.Linger, w.BatchBytes, w.Compression)
}

func (f Franz) Produce(ctx context.Context, cfg brewkit.Config, topic string, w perf.Workload, bar *perf.Bar) (perf.Phase, error) {
	codec, err := perf.Codec(w.Compression)
	if err != nil {
		return perf.Phase{}, err
	}
	opts := []kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(w.Linger),
		kgo.ProducerBatchMaxBytes(int32(w.BatchBytes)),
		kgo.ProducerBatchCompression(codec),
		kgo.MaxBufferedRecords(100_000),
	}
	if f.AsKafkaGo {
		opts = append(opts, kgo.DisableIdempotentWrite(), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	}
	cl, err := brewkit.NewClient(cfg, opts...)
	if err != nil {
		return perf.Phase{}, err
	}
	defer cl.Close()
	ph := perf.Phase{Records: w.Records}
	cpu, start := perf.ProcessCPU(), time.Now()
	lat, err := perf.Send(ctx, cl, topic, perf.Payloads(w.Size), w, bar)
	ph.Elapsed, ph.CPU = time.Since(start), perf.ProcessCPU()-cpu
	if err != nil {
		return ph, fmt.Errorf("franz-go: %w", err)
	}
	ph.Latencies(lat)
	ph.Finish(w.Size)
	return ph, nil
}

func (Franz) Consume(ctx context.Context, cfg brewkit.Config, topic string, w perf.Workload, bar *perf.Bar) (perf.Phase, error) {
	cl, err := brewkit.NewClient(cfg,
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.KeepRetryableFetchErrors(),
	)
	if err != nil {
		return perf.Phase{}, err
	}
	defer cl.Close()
	ph := perf.Phase{Records: w.Records}
	var check brewkit.FetchCheck
	cpu, start := perf.ProcessCPU(), time.Now()
	for n := 0; n < w.Records; {
		fs, err := check.Poll(ctx, cl, 0)
		if ctx.Err() != nil {
			return ph, fmt.Errorf("franz-go: read %d of %d: %w", n, w.Records, ctx.Err())
		}
		if err != nil {
			return ph, fmt.Errorf("franz-go: read %d of %d records: %w", n, w.Records, err)
		}
		got := fs.NumRecords()
		n += got
		bar.Add(got)
	}
	ph.Elapsed, ph.CPU = time.Since(start), perf.ProcessCPU()-cpu
	ph.Finish(w.Size)
	return ph, nil
}

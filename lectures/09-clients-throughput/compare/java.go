package compare

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"

	"github.com/brew-course/kafka/lectures/09-clients-throughput/perf"
)

// Java is Kafka's own ProducerPerformance and ConsumerPerformance (kafka-tools
// 4.2.0, the Java client), run from the native stand's jars. Its CPU is the
// JVM's, start-up and JIT included.
type Java struct{}

func (Java) Name() string { return "java (kafka-tools)" }

func (Java) Settings(w perf.Workload) string {
	return fmt.Sprintf("acks=all enable.idempotence=true linger.ms=%d batch.size=%d compression.type=%s", w.Linger.Milliseconds(), w.BatchBytes, w.Compression)
}

func javaRun(ctx context.Context, class string, args ...string) (string, time.Duration, error) {
	s, err := stand.Find()
	if err != nil {
		return "", 0, err
	}
	cmd, err := s.JavaClass(ctx, class, args...)
	if err != nil {
		return "", 0, err
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), 0, fmt.Errorf("%s: %w\n%s", class, err, out)
	}
	return string(out), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// "1000 records sent, 8583.7 records/sec (0.84 MB/sec), 10.15 ms avg latency,
// 216.00 ms max latency, 5 ms 50th, 40 ms 95th, 84 ms 99th, 216 ms 99.9th."
var producerLine = regexp.MustCompile(`(\d+) (?:steady state )?records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), [\d.]+ ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, \d+ ms 95th, (\d+) ms 99th`)

func (Java) Produce(ctx context.Context, cfg brewkit.Config, topic string, w perf.Workload, bar *perf.Bar) (perf.Phase, error) {
	// The same payloads as the Go clients, one per line.
	f, err := os.CreateTemp("", "brew-payloads-*.txt")
	if err != nil {
		return perf.Phase{}, err
	}
	defer os.Remove(f.Name())
	for _, v := range perf.Payloads(w.Size) {
		f.Write(append(v, '\n')) //nolint:errcheck // Close reports
	}
	if err := f.Close(); err != nil {
		return perf.Phase{}, err
	}
	out, cpu, err := javaRun(ctx, "org.apache.kafka.tools.ProducerPerformance",
		"--topic", topic, "--num-records", strconv.Itoa(w.Records), "--payload-file", f.Name(), "--throughput", throughput(w.Rate), "--warmup-records", strconv.Itoa(w.Warmup),
		"--command-property", "bootstrap.servers="+cfg.Bootstrap(), "acks=all", "enable.idempotence=true",
		"linger.ms="+strconv.FormatInt(w.Linger.Milliseconds(), 10), "batch.size="+strconv.Itoa(w.BatchBytes),
		"compression.type="+w.Compression, "client.id=brew-course")
	if err != nil {
		return perf.Phase{}, err
	}
	bar.Add(w.Records)
	ms := producerLine.FindAllStringSubmatch(out, -1)
	if len(ms) == 0 {
		return perf.Phase{}, fmt.Errorf("ProducerPerformance: no summary line in:\n%s", out)
	}
	// The first summary is the whole run's; with warm-up records a second
	// one follows for the steady state, the records after the warm-up. The
	// rate is the whole run's, as the Go clients measure it: a warm-up that
	// fell behind (the JVM starting on a busy machine) is caught up in the
	// steady state, whose own rate then runs above the one asked for. The
	// latencies are the steady state's.
	all, m := ms[0], ms[len(ms)-1]
	sent, _ := strconv.Atoi(all[1])
	perSec, _ := strconv.ParseFloat(all[2], 64)
	n, _ := strconv.Atoi(m[1])
	maxMs, _ := strconv.ParseFloat(m[4], 64)
	p50, _ := strconv.Atoi(m[5])
	p99, _ := strconv.Atoi(m[6])
	if sent != w.Records || n != w.Records-w.Warmup {
		return perf.Phase{}, fmt.Errorf("ProducerPerformance sent %d of %d records (%d of %d after the warm-up)", sent, w.Records, n, w.Records-w.Warmup)
	}
	ph := perf.Phase{Records: sent, PerSec: perSec, CPU: cpu,
		Elapsed: time.Duration(float64(sent) / perSec * float64(time.Second)),
		P50:     time.Duration(p50) * time.Millisecond, P99: time.Duration(p99) * time.Millisecond, Max: time.Duration(maxMs * float64(time.Millisecond))}
	ph.Finish(w.Size)
	return ph, nil
}

func (Java) Consume(ctx context.Context, cfg brewkit.Config, topic string, w perf.Workload, bar *perf.Bar) (perf.Phase, error) {
	out, cpu, err := javaRun(ctx, "org.apache.kafka.tools.ConsumerPerformance",
		"--bootstrap-server", cfg.Bootstrap(), "--topic", topic, "--num-records", strconv.Itoa(w.Records),
		"--group", topic+".java", "--timeout", "60000")
	if err != nil {
		return perf.Phase{}, err
	}
	bar.Add(w.Records)
	// A header line, then: start.time, end.time, data.consumed.in.MB, MB.sec,
	// data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms,
	// fetch.MB.sec, fetch.nMsg.sec.
	var fields []string
	for line := range strings.Lines(out) {
		f := strings.Split(strings.TrimSpace(line), ", ")
		if len(f) >= 10 && !strings.HasPrefix(f[0], "start.time") {
			fields = f
		}
	}
	if fields == nil {
		return perf.Phase{}, fmt.Errorf("ConsumerPerformance: no result line in:\n%s", out)
	}
	n, _ := strconv.Atoi(fields[4])
	fetchMs, _ := strconv.ParseFloat(fields[7], 64)
	if n < w.Records {
		return perf.Phase{}, fmt.Errorf("ConsumerPerformance read %d of %d records", n, w.Records)
	}
	// The fetch time leaves out joining the group, as the Go consumers here
	// read their partitions without a group.
	ph := perf.Phase{Records: n, CPU: cpu, Elapsed: time.Duration(fetchMs * float64(time.Millisecond))}
	ph.Finish(w.Size)
	return ph, nil
}

// throughput is ProducerPerformance's --throughput: records per second, or
// -1 for as fast as it can.
func throughput(rate int) string {
	if rate <= 0 {
		return "-1"
	}
	return strconv.Itoa(rate)
}

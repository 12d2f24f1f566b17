// Package perf holds what every measurement of the lecture shares: the
// workload, what a phase measured, latency percentiles, the CPU a process
// used, and a progress bar for long runs.
package perf

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"golang.org/x/term"
)

// Workload is what every client is asked to do, with the same settings.
type Workload struct {
	Records     int           `json:"records"`
	Size        int           `json:"record_bytes"`
	Partitions  int32         `json:"partitions"`
	Linger      time.Duration `json:"linger"`
	BatchBytes  int           `json:"batch_bytes"`
	Compression string        `json:"compression"` // none, gzip, snappy, lz4, zstd
	// Rate paces the producer at this many records per second; 0 sends as
	// fast as the client takes them. Below saturation the latency from send
	// to acknowledgement is the client's and the cluster's, not the time a
	// record waited in a full buffer.
	Rate int `json:"rate,omitempty"`
	// Warmup are the first records of Records, sent like the others but
	// left out of the latency: a client's start (metadata, an idempotent
	// producer's id) stalls its first sends, and that is not its latency.
	Warmup int `json:"warmup,omitempty"`
}

// Sent stamps a record as it is handed to a client, so that its
// acknowledgement knows its latency and whether it was a warm-up record.
type Sent struct {
	At   time.Time
	Warm bool
}

// Stamp is record i's stamp in w.
func (w Workload) Stamp(i int) Sent { return Sent{At: time.Now(), Warm: i < w.Warmup} }

// Sample adds the latency of the record stamped s, acknowledged now, to
// lat, unless it was a warm-up record.
func Sample(lat *[]time.Duration, s Sent) {
	if !s.Warm {
		*lat = append(*lat, time.Since(s.At))
	}
}

// Pacer paces a producer at rate records per second: pace(ctx, i) waits
// until record i is due, i/rate after record 0 was. A producer that fell
// behind does not wait. With a rate of 0 it never waits.
func Pacer(rate int) func(ctx context.Context, i int) error {
	if rate <= 0 {
		return func(context.Context, int) error { return nil }
	}
	var start time.Time
	return func(ctx context.Context, i int) error {
		if start.IsZero() {
			start = time.Now()
		}
		due := start.Add(time.Duration(float64(i) / float64(rate) * float64(time.Second)))
		if d := time.Until(due); d > 0 {
			return brewkit.Sleep(ctx, d)
		}
		return nil
	}
}

// Phase is one measured phase: producing or consuming Records records.
type Phase struct {
	Records   int           `json:"records"`
	Elapsed   time.Duration `json:"elapsed"`
	PerSec    float64       `json:"records_per_sec"`
	MiBPerSec float64       `json:"mib_per_sec"`
	P50       time.Duration `json:"p50,omitempty"` // send to acknowledgement (producers)
	P99       time.Duration `json:"p99,omitempty"`
	Max       time.Duration `json:"max,omitempty"`
	CPU       time.Duration `json:"cpu"` // process CPU (user + system) during the phase
}

// CPUPerMillion is the CPU the phase took per million records.
func (p Phase) CPUPerMillion() time.Duration {
	if p.Records == 0 {
		return 0
	}
	return time.Duration(float64(p.CPU) * 1e6 / float64(p.Records))
}

// Finish fills the rates from Records, size and Elapsed.
func (p *Phase) Finish(size int) {
	if s := p.Elapsed.Seconds(); s > 0 {
		p.PerSec = float64(p.Records) / s
		p.MiBPerSec = float64(p.Records) * float64(size) / s / (1 << 20)
	}
}

// Latencies sets P50, P99 and Max from the samples.
func (p *Phase) Latencies(samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	at := func(q float64) time.Duration { return samples[min(len(samples)-1, int(q*float64(len(samples))))] }
	p.P50, p.P99, p.Max = at(0.50), at(0.99), samples[len(samples)-1]
}

// ProcessCPU is this process's CPU time so far (user + system).
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Bar is a progress bar on stderr when it is a terminal, and nothing when not
// (CI logs, pipes).
type Bar struct{ b *progressbar.ProgressBar }

// NewBar starts a bar for n steps.
func NewBar(n int, what string) *Bar {
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return &Bar{}
	}
	return &Bar{progressbar.NewOptions(n,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)}
}

// Add moves the bar on by n.
func (b *Bar) Add(n int) {
	if b.b != nil {
		b.b.Add(n) //nolint:errcheck // a progress bar
	}
}

// Done clears the bar.
func (b *Bar) Done() {
	if b.b != nil {
		b.b.Finish() //nolint:errcheck // a progress bar
	}
}

// Payloads are 1024 record values of size bytes: Brew orders as JSON,
// cut or padded to size, so that compression sees what it would see in
// production rather than one repeated letter.
func Payloads(size int) [][]byte {
	rng := rand.New(rand.NewPCG(9, 9))
	out := make([][]byte, 1024)
	for i := range out {
		v := make([]byte, 0, size)
		for n := int64(i * 10); len(v) < size; n++ {
			b, _ := json.Marshal(brewkit.NewOrder(rng, n, time.Date(2026, 11, 30, 9, 0, 0, int(n)*1e6, time.UTC)))
			v = append(v, b...)
		}
		out[i] = v[:size]
	}
	return out
}

// Send produces w.Records records to topic with cl, their values taken from
// values in turn, at w.Rate records per second (0: as fast as cl takes
// them), flushes, and returns each record's time from Produce to its
// acknowledgement (the warm-up records left out), and the first error.
func Send(ctx context.Context, cl *kgo.Client, topic string, values [][]byte, w Workload, bar *Bar) ([]time.Duration, error) {
	var mu sync.Mutex
	lat := make([]time.Duration, 0, w.Records)
	var firstErr error
	pace := Pacer(w.Rate)
	for i := range w.Records {
		if err := pace(ctx, i); err != nil {
			break // Flush below reports ctx's error
		}
		sent := w.Stamp(i)
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: values[i%len(values)]}, func(_ *kgo.Record, err error) {
			mu.Lock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			Sample(&lat, sent)
			mu.Unlock()
			bar.Add(1)
		})
	}
	err := cl.Flush(ctx)
	mu.Lock()
	defer mu.Unlock()
	if firstErr != nil {
		err = firstErr
	}
	return lat, err
}

// Machine describes where the numbers come from: cores and CPU model.
func Machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
				model = strings.TrimSpace(value)
				break
			}
		}
	}
	return fmt.Sprintf("%d cores, %s", runtime.NumCPU(), model)
}

// Codec is kgo's codec for a compression name.
func Codec(name string) (kgo.CompressionCodec, error) {
	switch name {
	case "none", "":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.NoCompression(), fmt.Errorf("unknown compression %q: use none, gzip, snappy, lz4 or zstd", name)
}

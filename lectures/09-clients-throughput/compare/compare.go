// Package compare runs one Brew workload, with the same settings, through
// several Kafka clients: franz-go, IBM/sarama, segmentio/kafka-go,
// confluent-kafka-go (librdkafka), and Kafka's own Java tools as the reference. Each run writes a fresh topic and reads it
// back; runs are interleaved across clients, a warm-up round is left out, and
// the median and the range of the runs are reported.
package compare

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"

	"github.com/brew-course/kafka/lectures/09-clients-throughput/perf"
)

// Client is one Kafka client under test.
type Client interface {
	Name() string
	// Settings says how the workload's settings map onto this client.
	Settings(perf.Workload) string
	Produce(ctx context.Context, cfg brewkit.Config, topic string, w perf.Workload, bar *perf.Bar) (perf.Phase, error)
	Consume(ctx context.Context, cfg brewkit.Config, topic string, w perf.Workload, bar *perf.Bar) (perf.Phase, error)
}

// stalled is the error of a client's reader that got no record for
// cfg.Bound: what it read, and what it did not. The readers of clients
// without brewkit's fetch watch (all but franz-go) are bounded by it.
func stalled(client string, cfg brewkit.Config, n, of int) error {
	return fmt.Errorf("%s: read %d of %d records, then none for %s=%s: is a node paused or overloaded? `make status` shows the nodes",
		client, n, of, brewkit.EnvTimeout, cfg.Bound())
}

// Clients are every client, in the table's order.
var Clients = []Client{Franz{}, Sarama{}, KafkaGo{}, Confluent{}, Java{}}

// GoClients are the clients that run inside this process.
var GoClients = []Client{Franz{}, Sarama{}, KafkaGo{}, Confluent{}}

// Config is a comparison.
type Config struct {
	Workload perf.Workload
	Runs     int
	Clients  []Client
	// Rate and PacedRecords are the latency round: each client produces
	// PacedRecords at Rate records per second, below every client's
	// saturation, so its p50 and p99 are the client's and the cluster's
	// latency and not the time records queued in a full buffer. A Rate of
	// 0 leaves the round out.
	Rate         int
	PacedRecords int
}

// Defaults: 200 000 records of 256 bytes on 3 partitions, linger 5 ms,
// batches of 256 KiB, lz4, three runs; the latency round at 20 000 records/s
// (several times below the slowest client's throughput here) for 5 s, after a
// second of warm-up.
var Defaults = Config{
	Workload:     perf.Workload{Records: 200_000, Size: 256, Partitions: 3, Linger: 5 * time.Millisecond, BatchBytes: 256 << 10, Compression: "lz4"},
	Runs:         3,
	Rate:         20_000,
	PacedRecords: 100_000,
}

// Row is one client's runs.
type Row struct {
	Client   string       `json:"client"`
	Version  string       `json:"version"`
	Settings string       `json:"settings"`
	Produce  []perf.Phase `json:"produce"`
	Consume  []perf.Phase `json:"consume"`
	Paced    []perf.Phase `json:"paced,omitempty"` // the latency round's produce phases
}

// Result is the comparison.
type Result struct {
	Machine  string        `json:"machine"`
	Workload perf.Workload `json:"workload"`
	Runs     int           `json:"runs"`
	Rate     int           `json:"paced_rate,omitempty"` // records/s of the latency round
	Rows     []Row         `json:"rows"`
}

// Run compares the clients.
func Run(ctx context.Context, cfg brewkit.Config, c Config, say func(string)) (Result, error) {
	res := Result{Machine: perf.Machine(), Workload: c.Workload, Runs: c.Runs, Rate: c.Rate}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	for _, client := range c.Clients {
		res.Rows = append(res.Rows, Row{Client: client.Name(), Version: Version(client), Settings: client.Settings(c.Workload)})
	}
	b := bench{cfg: cfg, adm: adm, c: c}
	warm := c.Workload
	warm.Records = max(1, c.Workload.Records/10)
	for _, client := range c.Clients {
		if _, _, err := b.one(ctx, client, warm); err != nil {
			return res, fmt.Errorf("warm-up: %w", err)
		}
	}
	say(fmt.Sprintf("warm-up done; %d runs of %d records, interleaved", c.Runs, c.Workload.Records))
	for run := 1; run <= c.Runs; run++ {
		for i, client := range c.Clients {
			p, r, err := b.one(ctx, client, c.Workload)
			if err != nil {
				return res, err
			}
			res.Rows[i].Produce = append(res.Rows[i].Produce, p)
			res.Rows[i].Consume = append(res.Rows[i].Consume, r)
			say(fmt.Sprintf("run %d/%d %-18s produce %8.0f rec/s  consume %8.0f rec/s", run, c.Runs, client.Name(), p.PerSec, r.PerSec))
		}
		if c.Rate <= 0 {
			continue
		}
		for i, client := range c.Clients {
			p, err := b.paced(ctx, client)
			if err != nil {
				return res, err
			}
			res.Rows[i].Paced = append(res.Rows[i].Paced, p)
			say(fmt.Sprintf("run %d/%d %-18s at %d rec/s: p50 %s  p99 %s", run, c.Runs, client.Name(), c.Rate,
				p.P50.Round(100*time.Microsecond), p.P99.Round(100*time.Microsecond)))
		}
	}
	return res, nil
}

// bench runs the clients on fresh topics.
type bench struct {
	cfg brewkit.Config
	adm *kadm.Client
	c   Config
}

// fresh is a run's topic, once every leader answers for its partition
// (metadata can name a leader a moment before it has the log; kafka-go
// gives up then).
func (b bench) fresh(ctx context.Context, prefix string, w perf.Workload) (string, func(context.Context) error, error) {
	topic, drop, err := brewkit.FreshTopic(ctx, b.adm, brewkit.Fresh{Prefix: prefix, Partitions: w.Partitions})
	if err != nil {
		return "", nil, err
	}
	if _, err := brewkit.EndOffsets(ctx, b.adm, topic); err != nil {
		drop(ctx) //nolint:errcheck // leftovers are harmless
		return "", nil, err
	}
	return topic, drop, nil
}

// one is a run of client on workload w: produce it all, then consume it.
func (b bench) one(ctx context.Context, client Client, w perf.Workload) (perf.Phase, perf.Phase, error) {
	topic, drop, err := b.fresh(ctx, "brew.compare.", w)
	if err != nil {
		return perf.Phase{}, perf.Phase{}, err
	}
	defer drop(ctx) //nolint:errcheck // leftovers are harmless
	bar := perf.NewBar(w.Records, client.Name()+" produce")
	p, err := client.Produce(ctx, b.cfg, topic, w, bar)
	bar.Done()
	if err != nil {
		return p, perf.Phase{}, fmt.Errorf("%s producing: %w", client.Name(), err)
	}
	bar = perf.NewBar(w.Records, client.Name()+" consume")
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	r, err := client.Consume(cctx, b.cfg, topic, w, bar)
	bar.Done()
	if err != nil {
		return p, r, fmt.Errorf("%s consuming: %w", client.Name(), err)
	}
	return p, r, nil
}

// paced is the latency round's run of a client: produce only, at c.Rate.
func (b bench) paced(ctx context.Context, client Client) (perf.Phase, error) {
	c := b.c
	w := c.Workload
	// A second of warm-up first, sent at the rate and left out.
	w.Records, w.Rate, w.Warmup = c.Rate+c.PacedRecords, c.Rate, c.Rate
	topic, drop, err := b.fresh(ctx, "brew.compare.paced.", w)
	if err != nil {
		return perf.Phase{}, err
	}
	defer drop(ctx) //nolint:errcheck // leftovers are harmless
	bar := perf.NewBar(w.Records, fmt.Sprintf("%s at %d rec/s", client.Name(), w.Rate))
	p, err := client.Produce(ctx, b.cfg, topic, w, bar)
	bar.Done()
	if err != nil {
		return p, fmt.Errorf("%s producing at %d records/s: %w", client.Name(), w.Rate, err)
	}
	p.Records = c.PacedRecords // the measured ones; the rate is the whole run's
	return p, nil
}

// Version is the client library's module version, from this binary's build
// information (the stand's Kafka release for Kafka's tools).
func Version(c Client) string {
	path := map[string]string{
		"franz-go": "github.com/twmb/franz-go", "franz-go-as-kafka-go": "github.com/twmb/franz-go",
		"sarama": "github.com/IBM/sarama", "kafka-go": "github.com/segmentio/kafka-go",
		"confluent-kafka-go": "github.com/confluentinc/confluent-kafka-go/v2",
	}[c.Name()]
	if path == "" {
		return stand.KafkaVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "(unknown)"
}

// Stat is the median and range of one measure over the runs.
type Stat struct{ Median, Min, Max float64 }

func stat(phases []perf.Phase, f func(perf.Phase) float64) Stat {
	var v []float64
	for _, p := range phases {
		v = append(v, f(p))
	}
	if len(v) == 0 {
		return Stat{}
	}
	slices.Sort(v)
	return Stat{Median: v[len(v)/2], Min: v[0], Max: v[len(v)-1]}
}

// PacedLatency is the latency round's p50 and p99 over the runs, in
// milliseconds (zero without the round).
func (r Row) PacedLatency() (p50, p99 Stat) {
	p50 = stat(r.Paced, func(p perf.Phase) float64 { return float64(p.P50) / float64(time.Millisecond) })
	p99 = stat(r.Paced, func(p perf.Phase) float64 { return float64(p.P99) / float64(time.Millisecond) })
	return
}

// Stats of a row: producer and consumer records/s, producer p99 (ms), CPU
// seconds per million records for each.
func (r Row) Stats() (prod, cons, p99, prodCPU, consCPU Stat) {
	prod = stat(r.Produce, func(p perf.Phase) float64 { return p.PerSec })
	cons = stat(r.Consume, func(p perf.Phase) float64 { return p.PerSec })
	p99 = stat(r.Produce, func(p perf.Phase) float64 { return float64(p.P99) / float64(time.Millisecond) })
	prodCPU = stat(r.Produce, func(p perf.Phase) float64 { return p.CPUPerMillion().Seconds() })
	consCPU = stat(r.Consume, func(p perf.Phase) float64 { return p.CPUPerMillion().Seconds() })
	return
}

func (s Stat) rate() string {
	return fmt.Sprintf("%.0f (%.0f-%.0f)", s.Median, s.Min, s.Max)
}

func (s Stat) millis() string {
	return fmt.Sprintf("%.1f (%.1f-%.1f)", s.Median, s.Min, s.Max)
}

// Print writes the table.
func (res Result) Print(w io.Writer) {
	wl := res.Workload
	fmt.Fprintf(w, "machine: %s\n", res.Machine)
	fmt.Fprintf(w, "workload: %d records of %d B, %d partitions, acks=all, linger %s, batch %d B, %s; median (min-max) of %d runs\n\n",
		wl.Records, wl.Size, wl.Partitions, wl.Linger, wl.BatchBytes, wl.Compression, res.Runs)
	t := brewkit.NewTable(w, "CLIENT", "VERSION", "PRODUCE REC/S", "CONSUME REC/S", "P99 MS FULL", "CPU S/M PROD", "CPU S/M CONS")
	for _, r := range res.Rows {
		prod, cons, p99, pc, cc := r.Stats()
		t.Row(r.Client, r.Version, prod.rate(), cons.rate(), fmt.Sprintf("%.0f", p99.Median), fmt.Sprintf("%.2f", pc.Median), fmt.Sprintf("%.2f", cc.Median))
	}
	t.Flush()
	if res.Rate > 0 {
		fmt.Fprintf(w, "\nlatency at %d records/s, below every client's saturation: send to acknowledgement, median (min-max) of %d runs\n", res.Rate, res.Runs)
		t := brewkit.NewTable(w, "CLIENT", "P50 MS", "P99 MS")
		for _, r := range res.Rows {
			p50, p99 := r.PacedLatency()
			t.Row(r.Client, p50.millis(), p99.millis())
		}
		t.Flush()
	}
	fmt.Fprintln(w)
	for _, r := range res.Rows {
		fmt.Fprintf(w, "%s: %s\n", r.Client, r.Settings)
	}
}

// Markdown writes the table for the README.
func (res Result) Markdown(w io.Writer) {
	wl := res.Workload
	fmt.Fprintf(w, "Machine: %s. Workload: %d records of %d B, %d partitions, acks=all, linger %s, batch %d B, %s; median (min-max) of %d runs.\n\n",
		res.Machine, wl.Records, wl.Size, wl.Partitions, wl.Linger, wl.BatchBytes, wl.Compression, res.Runs)
	fmt.Fprintln(w, "| client | version | produce rec/s | consume rec/s | p99 ms at full speed | CPU s/M produce | CPU s/M consume | settings |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, r := range res.Rows {
		prod, cons, p99, pc, cc := r.Stats()
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.0f | %.2f | %.2f | %s |\n", r.Client, r.Version, prod.rate(), cons.rate(), p99.Median, pc.Median, cc.Median, r.Settings)
	}
	if res.Rate == 0 {
		return
	}
	fmt.Fprintf(w, "\nLatency at %d records/s, below every client's saturation, from send to acknowledgement; median (min-max) of %d runs:\n\n", res.Rate, res.Runs)
	fmt.Fprintln(w, "| client | p50 ms | p99 ms |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, r := range res.Rows {
		p50, p99 := r.PacedLatency()
		fmt.Fprintf(w, "| %s | %s | %s |\n", r.Client, p50.millis(), p99.millis())
	}
}

// CSV writes one line per client and run.
func (res Result) CSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"client", "version", "run", "produce_rec_s", "consume_rec_s", "p50_ms", "p99_ms", "produce_cpu_s_per_m", "consume_cpu_s_per_m", "paced_rec_s", "paced_p50_ms", "paced_p99_ms"}) //nolint:errcheck // Flush reports
	for _, r := range res.Rows {
		for i := range r.Produce {
			p, c := r.Produce[i], r.Consume[i]
			var paced perf.Phase
			if i < len(r.Paced) {
				paced = r.Paced[i]
			}
			cw.Write([]string{r.Client, r.Version, strconv.Itoa(i + 1), //nolint:errcheck // Flush reports
				fmt.Sprintf("%.0f", p.PerSec), fmt.Sprintf("%.0f", c.PerSec),
				fmt.Sprintf("%.1f", float64(p.P50)/1e6), fmt.Sprintf("%.1f", float64(p.P99)/1e6),
				fmt.Sprintf("%.3f", p.CPUPerMillion().Seconds()), fmt.Sprintf("%.3f", c.CPUPerMillion().Seconds()),
				fmt.Sprintf("%.0f", paced.PerSec), fmt.Sprintf("%.2f", float64(paced.P50)/1e6), fmt.Sprintf("%.2f", float64(paced.P99)/1e6)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// ParseClients picks clients by name ("all", or a comma list).
func ParseClients(s string) ([]Client, error) {
	if s == "" || s == "all" {
		return Clients, nil
	}
	known := append(slices.Clone(Clients), Franz{AsKafkaGo: true})
	var out []Client
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(known, func(c Client) bool { return c.Name() == name || name == "java" && c.Name() == Java{}.Name() })
		if i < 0 {
			return nil, fmt.Errorf("unknown client %q: use franz-go, sarama, kafka-go, confluent-kafka-go, java or franz-go-as-kafka-go", name)
		}
		out = append(out, known[i])
	}
	return out, nil
}

// Codecs checks that every client can take compression name.
func Codecs(name string) (string, error) {
	if _, err := perf.Codec(name); err != nil {
		return "", err
	}
	return name, nil
}

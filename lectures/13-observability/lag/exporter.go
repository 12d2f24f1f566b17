package lag

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// MetricsAddr is where the lag exporter serves /metrics; Prometheus scrapes
// it (the course's config has a job for it).
const MetricsAddr = "127.0.0.1:17080"

// The series the exporter serves, which the course's alert rules use.
const (
	// SeriesLagRecords is a partition's LAG, labels group, topic,
	// partition, kind (consumer or share). A partition without a commit
	// has none.
	SeriesLagRecords = "brew_group_lag_records"
	// SeriesLagSeconds is a partition's TIME-LAG in seconds, same labels;
	// none while it is unknown.
	SeriesLagSeconds = "brew_group_lag_seconds"
	// SeriesMembers is a group's member count, labels group, kind.
	SeriesMembers = "brew_group_members"
	// SeriesScrapeErrors counts the scrapes whose measurement failed, wholly
	// or for some group (its series are then missing from that scrape).
	SeriesScrapeErrors = "brew_lag_scrape_errors_total"
)

var (
	descLagRecords = prometheus.NewDesc(SeriesLagRecords,
		"Records the group has not processed yet on the partition: end offset (high watermark) minus committed offset (a share group's: as the broker reports it).",
		[]string{"group", "topic", "partition", "kind"}, nil)
	descLagSeconds = prometheus.NewDesc(SeriesLagSeconds,
		"Age of the oldest record the group has not processed yet on the partition (now minus the timestamp of the record at the committed offset); 0 without lag.",
		[]string{"group", "topic", "partition", "kind"}, nil)
	descMembers = prometheus.NewDesc(SeriesMembers,
		"Members of the group.",
		[]string{"group", "kind"}, nil)
)

// Collector is a prometheus.Collector that measures the groups on every
// scrape (Measure, bounded by its Options' Timeout) and exports what it
// found. A measurement that fails, wholly or for a group, counts in
// brew_lag_scrape_errors_total and leaves the series it could not measure
// out of that scrape (or, within its Options' KeepFor, serves the group's
// last measurement again); the scrape itself succeeds. Scrapes at once are
// measured one after the other.
//
// A series missing from one scrape sends every alert on it back to the
// start of its for: (Prometheus marks it stale): on a busy machine one slow
// measurement is enough. KeepFor trades that for values up to KeepFor old.
type Collector struct {
	ctx    context.Context
	cfg    brewkit.Config
	o      Options
	errors prometheus.Counter
	// OnError, when set, is told each failure (stderr in cmd/lag).
	OnError func(error)

	mu   sync.Mutex // one measurement at a time
	last map[string]kept
}

// kept is a group's last measurement and when it was made.
type kept struct {
	g  Group
	at time.Time
}

// NewCollector returns a Collector of the groups o names on the cluster
// behind cfg; the measurements stop when ctx ends.
func NewCollector(ctx context.Context, cfg brewkit.Config, o Options) *Collector {
	return &Collector{
		ctx: ctx, cfg: cfg, o: o,
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: SeriesScrapeErrors,
			Help: "Scrapes of the lag exporter whose measurement failed, wholly or for some group.",
		}),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descLagRecords
	ch <- descLagSeconds
	ch <- descMembers
	c.errors.Describe(ch)
}

// Collect implements prometheus.Collector: it measures, then sends.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer func() { ch <- c.errors }()
	defer func() {
		if p := recover(); p != nil { // a bug must not end the exporter
			c.failed(fmt.Errorf("measuring panicked: %v", p))
		}
	}()
	r, err := Measure(c.ctx, c.cfg, c.o)
	if err != nil {
		c.failed(err)
		c.sendKept(ch, nil)
		return
	}
	if err := r.Err(); err != nil {
		c.failed(err)
	}
	measured := map[string]bool{}
	for _, g := range r.Groups {
		if g.Err != nil {
			continue
		}
		measured[g.Name+"/"+string(g.Kind)] = true
		if c.o.KeepFor > 0 {
			if c.last == nil {
				c.last = map[string]kept{}
			}
			c.last[g.Name+"/"+string(g.Kind)] = kept{g, time.Now()}
		}
		send(ch, g)
	}
	c.sendKept(ch, measured)
}

// sendKept sends the last measurement of each group this scrape did not
// measure, while it is at most KeepFor old, and forgets the older ones.
func (c *Collector) sendKept(ch chan<- prometheus.Metric, measured map[string]bool) {
	for k, v := range c.last {
		switch {
		case measured[k]:
		case time.Since(v.at) > c.o.KeepFor:
			delete(c.last, k)
		default:
			// The oldest unprocessed record has aged since: as far as
			// the exporter knows, it waits still.
			g, age := v.g, time.Since(v.at)
			g.Partitions = slices.Clone(g.Partitions)
			for i, p := range g.Partitions {
				if p.Lag > 0 && p.TimeLag >= 0 {
					g.Partitions[i].TimeLag += age
				}
			}
			send(ch, g)
		}
	}
}

// send sends a measured group's series.
func send(ch chan<- prometheus.Metric, g Group) {
	kind := string(g.Kind)
	ch <- prometheus.MustNewConstMetric(descMembers, prometheus.GaugeValue, float64(g.Members), g.Name, kind)
	for _, p := range g.Partitions {
		part := strconv.Itoa(int(p.Partition))
		if p.Lag >= 0 {
			ch <- prometheus.MustNewConstMetric(descLagRecords, prometheus.GaugeValue, float64(p.Lag), g.Name, p.Topic, part, kind)
		}
		if p.Lag >= 0 && p.TimeLag >= 0 {
			ch <- prometheus.MustNewConstMetric(descLagSeconds, prometheus.GaugeValue, p.TimeLag.Seconds(), g.Name, p.Topic, part, kind)
		}
	}
}

func (c *Collector) failed(err error) {
	c.errors.Inc()
	if c.OnError != nil {
		c.OnError(err)
	}
}

// Handler serves c alone, in Prometheus's text format, on any path.
func Handler(c *Collector) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Serve serves c's /metrics on addr (MetricsAddr for Prometheus) until ctx
// ends. It returns once it listens, with the address it listens on (addr
// with port 0 picks a free port), or with the reason it cannot.
func Serve(ctx context.Context, addr string, c *Collector) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("serving the lag metrics on %s: %w (another lag -listen or fire-drill running?)", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", Handler(c))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	go srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed when ctx ends
	return ln.Addr().String(), nil
}

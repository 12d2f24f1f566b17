package kitchen

import (
	"context"
	"fmt"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Options configure a run of the instrumented service.
type Options struct {
	Topic    string
	Group    string
	Rate     int           // orders a second
	For      time.Duration // how long the till places orders
	Cook     time.Duration // each order's cooking
	Listen   string        // where /metrics is served during the run; "" serves nothing
	Progress func(string)
}

// Defaults are the instrumented program's defaults.
var Defaults = Options{
	Topic:  "brew.obs.orders",
	Group:  "brew.obs.kitchen",
	Rate:   20,
	For:    10 * time.Second,
	Cook:   5 * time.Millisecond,
	Listen: MetricsAddr,
}

// Drain bounds how long the kitchen may take to cook what the till placed
// once the till has stopped.
const Drain = 10 * time.Second

// Report is what a run did, by the service's counts and by its metrics.
type Report struct {
	Topic, Group string
	Placed       int64
	Failed       int64
	Cooked       int64
	Metrics      []Reading
}

// Reading is one series of the registry, summed over its labels, with what it
// means for on-call.
type Reading struct {
	Name   string // without the namespace
	Client string // brew-till, brew-kitchen, or "" for the service's own
	Value  float64
	Means  string
}

// Shown are the series the program prints, in order, with their meaning.
var Shown = []Reading{
	{Name: "orders_placed_total", Means: "orders Kafka acknowledged (the service's own counter)"},
	{Name: "produce_errors_total", Means: "orders whose write failed; above 0 pages (BrewProduceErrors)"},
	{Name: "produce_records_total", Client: "brew-till", Means: "records the till's client sent and Kafka took (kprom)"},
	{Name: "produce_batches_total", Client: "brew-till", Means: "batches they went in: records / batches is the batching"},
	{Name: "produce_uncompressed_bytes_total", Client: "brew-till", Means: "their bytes before compression: bytes / batches is a batch's size"},
	{Name: "buffered_produce_records_total", Client: "brew-till", Means: "records waiting in the client now: grows when Kafka is slow or down"},
	{Name: "fetch_records_total", Client: "brew-kitchen", Means: "records the kitchen's client fetched"},
	{Name: "fetch_batches_total", Client: "brew-kitchen", Means: "batches they came in"},
	{Name: "buffered_fetch_records_total", Client: "brew-kitchen", Means: "fetched, not yet polled: grows when the kitchen is slower than Kafka"},
	{Name: "orders_cooked_total", Means: "orders the kitchen cooked (the service's own counter)"},
	{Name: "connects_total", Means: "connections opened to the nodes, both clients"},
	{Name: "connect_errors_total", Means: "connections that failed: a node down or unreachable"},
	{Name: "write_errors_total", Means: "requests that failed on the wire, both clients"},
}

// Run places orders for o.For with a till while a kitchen cooks them, then
// stops the till, lets the kitchen cook what is left (up to Drain), and
// reads the registry.
func Run(ctx context.Context, cfg brewkit.Config, o Options) (Report, error) {
	say := o.Progress
	if say == nil {
		say = func(string) {}
	}
	_, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return Report{}, err
	}
	defer adm.Close()
	// A topic of its own: on brew.orders.v1 a new kitchen would cook every
	// order the other lectures wrote. Created if missing, kept after.
	if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.TopicNamed(o.Topic, 3)); err != nil {
		return Report{}, err
	}
	m := NewMetrics()
	if o.Listen != "" {
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		if err := m.Serve(sctx, o.Listen); err != nil {
			return Report{}, err
		}
		say(fmt.Sprintf("metrics on http://%s/metrics", o.Listen))
	}
	k, err := StartKitchen(ctx, cfg, m, o.Topic, o.Group, o.Cook, false)
	if err != nil {
		return Report{}, err
	}
	// The till places a count of orders, paced by its clock, rather than
	// placing for a time: a count is what the report can check, and a
	// deadline shares its instant with a tick of the till.
	t, err := StartTill(ctx, cfg, m, o.Topic, o.Rate, max(1, int64(o.Rate)*int64(o.For)/int64(time.Second)))
	if err != nil {
		k.Stop() //nolint:errcheck // the till's error is the one to report
		return Report{}, err
	}
	defer t.Close()
	say(fmt.Sprintf("the till places %d orders a second on %s for %s; the kitchen (group %s) cooks them", o.Rate, o.Topic, o.For, o.Group))
	// The run ends early when the kitchen stops on an error, or when
	// nothing at all could be written.
	select {
	case <-ctx.Done():
	case <-k.Exited():
	case <-t.Done():
	}
	t.Stop()
	werr := ctx.Err()
	if werr == nil && t.Placed() == 0 && t.Failed() > 0 {
		werr = fmt.Errorf("every order failed to be written (%d), the last with: %w", t.Failed(), t.LastErr())
	}
	if werr == nil {
		werr = waitCooked(ctx, k, t)
	}
	// The registry is read while both clients are open: a closed client's
	// series leave it.
	r := Report{Topic: o.Topic, Group: o.Group, Placed: t.Placed(), Failed: t.Failed(), Cooked: k.Cooked()}
	var rerr error
	if werr == nil {
		// kgo runs kprom's batch hook after the batch's promises, so the
		// last batch's records may reach produce_records_total a moment
		// after the till counted them placed: read once they have.
		_ = brewkit.WaitFor(ctx, 2*time.Second, 20*time.Millisecond, func() bool {
			r.Metrics, rerr = Read(m)
			return rerr != nil || value(r.Metrics, "produce_records_total") >= float64(r.Placed)
		})
	}
	if err := k.Stop(); err != nil && werr == nil {
		werr = err
	}
	switch {
	case werr != nil:
		return Report{}, werr
	case r.Failed > 0:
		return r, fmt.Errorf("%d of %d orders failed to be written, the last with: %w", r.Failed, r.Failed+r.Placed, t.LastErr())
	}
	return r, rerr
}

// waitCooked waits, at most Drain, until the kitchen has cooked at least
// what the till placed in this run (an earlier run's leftovers only add to
// its count), unless an error stops it; it returns that error, or why the
// kitchen fell short.
func waitCooked(ctx context.Context, k *Kitchen, t *Till) error {
	_ = brewkit.WaitFor(ctx, Drain, 50*time.Millisecond, func() bool {
		select {
		case <-k.Exited():
			return true
		default:
			return k.Cooked() >= t.Placed()
		}
	})
	select {
	case <-k.Exited():
		if err := k.Stop(); err != nil {
			return err // the error that stopped it
		}
	default:
		if k.Cooked() < t.Placed() {
			return fmt.Errorf("the kitchen cooked %d of %d orders within %s of the till's stop", k.Cooked(), t.Placed(), Drain)
		}
	}
	return ctx.Err()
}

// value is the reading of name, or -1.
func value(rs []Reading, name string) float64 {
	for _, r := range rs {
		if r.Name == name {
			return r.Value
		}
	}
	return -1
}

// Read takes the Shown series from m's registry, each summed over its
// labels (of its client only, where it names one).
func Read(m *Metrics) ([]Reading, error) {
	families, err := m.reg.Gather()
	if err != nil {
		return nil, fmt.Errorf("gathering the metrics: %w", err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, f := range families {
		byName[f.GetName()] = f
	}
	var out []Reading
	for _, s := range Shown {
		if f := byName[Namespace+"_"+s.Name]; f != nil {
			s.Value = sum(f, s.Client)
		}
		out = append(out, s)
	}
	return out, nil
}

func sum(f *dto.MetricFamily, client string) float64 {
	var v float64
	for _, m := range f.GetMetric() {
		if client != "" && label(m, "client_id") != client {
			continue
		}
		switch {
		case m.Counter != nil:
			v += m.Counter.GetValue()
		case m.Gauge != nil:
			v += m.Gauge.GetValue()
		}
	}
	return v
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

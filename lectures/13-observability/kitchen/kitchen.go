// Package kitchen is Brew's kitchen-service with its metrics: a till that
// places orders at a steady rate and a kitchen that cooks them, each a
// franz-go client instrumented with the kprom plugin, both on one Prometheus
// registry that a /metrics endpoint serves. kprom counts what the clients
// do (records and batches produced and fetched, bytes, connections, what is
// buffered); the service adds what only it knows: orders placed, cooked,
// and orders whose write failed.
//
// The fire drill runs a till and a kitchen and stops the kitchen to make the
// lag alerts fire; the instrumented program runs both for a while and prints
// what each metric says.
package kitchen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kprom"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Namespace starts the name of every series the service exports.
const Namespace = "brew"

// MetricsAddr is where the course's services serve /metrics; Prometheus
// scrapes it as job brew-apps (stand/services/prometheus.yml).
const MetricsAddr = "127.0.0.1:17081"

// Metrics is the service's registry: kprom's series for each client, with a
// client_id label, and the service's own.
type Metrics struct {
	reg          *prometheus.Registry
	placed       prometheus.Counter
	cooked       prometheus.Counter
	produceFails *prometheus.CounterVec
}

// NewMetrics returns an empty registry with the service's own series.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg: reg,
		placed: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "orders_placed_total",
			Help: "Orders the till wrote and Kafka acknowledged.",
		}),
		cooked: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "orders_cooked_total",
			Help: "Orders the kitchen cooked.",
		}),
		// kprom has no series for records that failed: a record's error
		// reaches only its promise, so the service counts it there.
		produceFails: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "produce_errors_total",
			Help: "Records whose write failed (the promise's error), by topic.",
		}, []string{"topic"}),
	}
	reg.MustRegister(m.placed, m.cooked, m.produceFails)
	return m
}

// Registry is the registry to gather from.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// hooks returns kprom's hooks for one more client: each client needs its
// own kprom.Metrics, labelled with its client id. Beyond kprom's default
// bytes by node and topic, records and batches are counted: records over
// batches is how well the producer batches.
func (m *Metrics) hooks() kgo.Opt {
	return kgo.WithHooks(kprom.NewMetrics(Namespace, kprom.Registry(m.reg), kprom.WithClientLabel(),
		kprom.FetchAndProduceDetail(kprom.ByNode, kprom.ByTopic, kprom.Records, kprom.Batches,
			kprom.UncompressedBytes, kprom.ConsistentNaming)))
}

// Serve serves the registry on addr until ctx ends. It returns once it
// listens, or with the reason it cannot.
func (m *Metrics) Serve(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serving metrics on %s: %w (another instrumented or fire-drill running?)", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	go srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed when ctx ends
	return nil
}

// Till places orders on a topic at a steady rate until it is stopped.
type Till struct {
	cl     *kgo.Client
	m      *Metrics
	topic  string
	placed atomic.Int64
	failed atomic.Int64
	last   atomic.Pointer[failure] // the last write that failed
	parent context.Context         // the records' context
	cancel context.CancelFunc
	done   chan struct{}
}

// StartTill starts writing rate orders a second to topic with acks=all,
// as client brew-till: orders of them, or until Stop when orders is 0.
func StartTill(ctx context.Context, cfg brewkit.Config, m *Metrics, topic string, rate int, orders int64) (*Till, error) {
	// A write fails only when the cluster cannot take it within the
	// client's timeout. kgo gives up at once on a connection closed before
	// its first answer (it suspects TLS); on the docker stand that is what a
	// node that is down or just started does (its published port accepts
	// and closes), where on the native stand the port refuses and kgo
	// retries. The program's first client (brewkit.Connect) still reports
	// a TLS mistake at once.
	cl, err := brewkit.NewClient(cfg, kgo.ClientID("brew-till"), m.hooks(), kgo.DefaultProduceTopic(topic), kgo.AlwaysRetryEOF())
	if err != nil {
		return nil, err
	}
	// The error counter is exported at 0 from the start: rate() needs a
	// sample before the first error to see it rise.
	m.produceFails.WithLabelValues(topic)
	loop, cancel := context.WithCancel(ctx)
	t := &Till{cl: cl, m: m, topic: topic, parent: ctx, cancel: cancel, done: make(chan struct{})}
	go t.run(loop, rate, orders)
	return t, nil
}

func (t *Till) run(ctx context.Context, rate int, orders int64) {
	defer close(t.done)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 13))
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	// Stop ends the loop, not the records in flight: each is acknowledged
	// or fails within the client's delivery timeout. Only the program's
	// own end (Ctrl-C: the parent context) abandons them.
	produceCtx := t.parent
	var wg sync.WaitGroup
	defer wg.Wait()
	for n := int64(1); orders == 0 || n <= orders; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		wg.Add(1)
		t.cl.Produce(produceCtx, brewkit.NewOrder(rng, n, time.Now()).Record(t.topic), func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				if errors.Is(err, context.Canceled) {
					return // the program is stopping: not the cluster's failure
				}
				t.failed.Add(1)
				t.last.Store(&failure{time.Now(), err})
				t.m.produceFails.WithLabelValues(r.Topic).Inc()
				return
			}
			t.placed.Add(1)
			t.m.placed.Inc()
		})
	}
}

// Placed is how many orders Kafka acknowledged so far.
func (t *Till) Placed() int64 { return t.placed.Load() }

// Failed is how many orders failed to be written so far.
func (t *Till) Failed() int64 { return t.failed.Load() }

// failure is a write that failed, and when.
type failure struct {
	at  time.Time
	err error
}

// LastErr is the last write's error, or nil.
func (t *Till) LastErr() error {
	_, err := t.LastFailure()
	return err
}

// LastFailure is when the last write failed and its error (the zero time
// and nil when none did).
func (t *Till) LastFailure() (time.Time, error) {
	if f := t.last.Load(); f != nil {
		return f.at, f.err
	}
	return time.Time{}, nil
}

// Done is closed when the till has placed all its orders (or was stopped)
// and each of them was acknowledged or failed.
func (t *Till) Done() <-chan struct{} { return t.done }

// Stop stops placing orders and waits for the ones in flight to be
// acknowledged or to fail (within the client's delivery timeout). The client
// stays open, and its series in the registry, until Close.
func (t *Till) Stop() {
	t.cancel()
	<-t.done
}

// Close stops the till and closes its client, which takes kprom's series of
// the client out of the registry.
func (t *Till) Close() {
	t.Stop()
	t.cl.Close()
}

// Kitchen cooks the orders of a topic as a member of a consumer group.
type Kitchen struct {
	cl      *kgo.Client
	cooked  atomic.Int64
	cancel  context.CancelFunc
	exited  chan struct{} // closed when the kitchen stops cooking
	err     error         // why, once exited is closed
	stopped bool          // Stop ran: a second call returns err alone
	lastErr atomic.Pointer[error]
}

// StartKitchen joins group on topic as client brew-kitchen and cooks each
// order in cook (0: at once), committing what it cooked. A fetch error it
// must not wait on (authorization, a node that answers none of its fetches
// for cfg's bound) stops it, unless rideOut: then it keeps polling, as a
// service does through a node's outage, and only LastErr tells.
func StartKitchen(ctx context.Context, cfg brewkit.Config, m *Metrics, topic, group string, cook time.Duration, rideOut bool) (*Kitchen, error) {
	cl, err := brewkit.NewClient(cfg, kgo.ClientID("brew-kitchen"), m.hooks(), kgo.KeepRetryableFetchErrors(),
		kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitMarks(), kgo.AutoCommitInterval(time.Second),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, _ map[string][]int32) {
			_ = cl.CommitMarkedOffsets(ctx) // what was cooked stays cooked
		}),
	)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	k := &Kitchen{cl: cl, cancel: cancel, exited: make(chan struct{})}
	go func() {
		k.err = k.run(ctx, m, cook, rideOut)
		close(k.exited)
	}()
	return k, nil
}

func (k *Kitchen) run(ctx context.Context, m *Metrics, cook time.Duration, rideOut bool) error {
	var check brewkit.FetchCheck
	for {
		fs, err := check.Poll(ctx, k.cl, 0)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if !rideOut {
				return fmt.Errorf("kitchen: %w", err)
			}
			// A node down, frozen or cut off: the client tries again, and
			// a service keeps polling; the lag alerts tell on-call when it
			// does not catch up.
			k.lastErr.Store(&err)
			if err := brewkit.Sleep(ctx, 100*time.Millisecond); err != nil {
				return nil
			}
		}
		for r := range fs.RecordsAll() {
			if cook > 0 {
				if err := brewkit.Sleep(ctx, cook); err != nil {
					return nil
				}
			}
			k.cl.MarkCommitRecords(r)
			k.cooked.Add(1)
			m.cooked.Inc()
		}
	}
}

// Cooked is how many orders the kitchen cooked so far.
func (k *Kitchen) Cooked() int64 { return k.cooked.Load() }

// Exited is closed when the kitchen stopped cooking: Stop was called, or a
// fetch error stopped it (Stop returns it).
func (k *Kitchen) Exited() <-chan struct{} { return k.exited }

// LastErr is the last fetch error a kitchen that rides out faults saw.
func (k *Kitchen) LastErr() error {
	if p := k.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Stop commits what was cooked, leaves the group and closes the client: the
// group has no members until a kitchen starts again, and kprom's series of
// the client leave the registry. It returns the error that stopped the
// kitchen before, if one did.
func (k *Kitchen) Stop() error {
	k.cancel()
	<-k.exited
	if k.stopped {
		return k.err
	}
	k.stopped = true
	err := k.err
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if cerr := k.cl.CommitMarkedOffsets(ctx); cerr != nil {
			err = fmt.Errorf("kitchen: committing on stop: %w", cerr)
		}
	}
	k.cl.Close() // leaves the group
	return err
}

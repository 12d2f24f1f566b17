// Package acks runs one workload with acks=0, acks=1 and acks=all and
// measures what each costs, and shows min.insync.replicas refusing acks=all
// while acks=1 still writes.
package acks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/05-acks-durability/lab"
)

// Config is the workload.
type Config struct {
	Records    int
	Size       int // value bytes per record
	Partitions int32
}

// Defaults: 20,000 records of 512 bytes over 6 partitions.
var Defaults = Config{Records: 20000, Size: 512, Partitions: 6}

// Level is one acks setting and the producer options it runs with.
type Level struct {
	Name     string
	Settings string
	Opts     []kgo.Opt
}

// Levels are the three settings, as a producer would set them. kgo's default
// is acks=all with idempotence; acks=0 and acks=1 cannot be idempotent.
var Levels = []Level{
	{"0", "acks=0, not idempotent, 1 request in flight", []kgo.Opt{kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite()}},
	{"1", "acks=1, not idempotent, 1 request in flight", []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}},
	{"all", "acks=all, idempotent, 5 requests in flight", []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks())}},
}

// Measure is one level's run.
type Measure struct {
	Acks      string        `json:"acks"`
	Settings  string        `json:"settings"`
	Records   int           `json:"records"`
	Errors    int           `json:"errors"`
	Took      time.Duration `json:"took"`
	PerSecond float64       `json:"records_per_second"`
	MiBPerSec float64       `json:"mib_per_second"`
	P50       time.Duration `json:"p50"` // send to acknowledgement (acks=0: to the write on the socket)
	P99       time.Duration `json:"p99"`
	Max       time.Duration `json:"max"`
}

// Bench runs the workload once per level, each on a fresh topic. Before
// the first level it checks that this client may write at all, with one
// acknowledged record: acks=0 hears of no refusal, and a run that cannot
// write says only why.
func Bench(ctx context.Context, cfg brewkit.Config, c Config, say func(string)) ([]Measure, error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var out []Measure
	for i, l := range Levels {
		m, err := level(ctx, cfg, cl, adm, c, l, i == 0, say)
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}

// level measures one level on a fresh topic; probe first writes one record
// there with cl, which waits for every replica's acknowledgement.
func level(ctx context.Context, cfg brewkit.Config, cl *kgo.Client, adm *kadm.Client, c Config, l Level, probe bool, say func(string)) (Measure, error) {
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.acks.", Partitions: c.Partitions})
	if err != nil {
		return Measure{Acks: l.Name, Settings: l.Settings, Records: c.Records}, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover demo topic is harmless
	if probe {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("probe")}).FirstErr(); err != nil {
			return Measure{Acks: l.Name, Settings: l.Settings, Records: c.Records}, fmt.Errorf("writing to %s: %w", topic, err)
		}
	}
	say(fmt.Sprintf("acks=%s: writing %d records of %d bytes to %d partitions", l.Name, c.Records, c.Size, c.Partitions))
	return bench(ctx, cfg, topic, c, l)
}

func bench(ctx context.Context, cfg brewkit.Config, topic string, c Config, l Level) (Measure, error) {
	m := Measure{Acks: l.Name, Settings: l.Settings, Records: c.Records}
	prod, err := brewkit.NewClient(cfg, append([]kgo.Opt{kgo.ProducerLinger(5 * time.Millisecond)}, l.Opts...)...)
	if err != nil {
		return m, err
	}
	defer prod.Close()
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("warm-up")}).FirstErr(); err != nil {
		return m, fmt.Errorf("writing to %s: %w", topic, err)
	}
	value := make([]byte, c.Size)
	lat := make([]time.Duration, 0, c.Records)
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	for i := range c.Records {
		sent := time.Now()
		key := []byte(brewkit.OrderID(int64(i)))
		prod.Produce(ctx, &kgo.Record{Topic: topic, Key: key, Value: value}, func(_ *kgo.Record, err error) {
			took := time.Since(sent)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				m.Errors++
				firstErr = cmpErr(firstErr, err)
				return
			}
			lat = append(lat, took)
		})
	}
	if err := prod.Flush(ctx); err != nil {
		return m, err
	}
	m.Took = time.Since(start)
	if firstErr != nil && errors.Is(firstErr, context.Canceled) {
		return m, firstErr
	}
	m.PerSecond = float64(c.Records) / m.Took.Seconds()
	m.MiBPerSec = float64(c.Records*c.Size) / (1 << 20) / m.Took.Seconds()
	slices.Sort(lat)
	if len(lat) > 0 {
		m.P50, m.P99, m.Max = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	}
	return m, nil
}

func cmpErr(first, err error) error {
	if first == nil {
		return err
	}
	return first
}

// PrintBench writes the measures as a table, with the settings below it.
func PrintBench(w io.Writer, ms []Measure) {
	t := brewkit.NewTable(w, "ACKS", "RECORDS/S", "MIB/S", "P50", "P99", "MAX", "ERRORS")
	for _, m := range ms {
		t.Row(m.Acks, fmt.Sprintf("%.0f", m.PerSecond), fmt.Sprintf("%.1f", m.MiBPerSec),
			ms3(m.P50), ms3(m.P99), ms3(m.Max), m.Errors)
	}
	t.Flush()
	fmt.Fprintln(w)
	for _, m := range ms {
		fmt.Fprintf(w, "acks=%-3s %s, linger 5ms\n", m.Acks, strings.TrimPrefix(m.Settings, "acks="+m.Acks+", "))
	}
}

func ms3(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }

// Refusal is the min.insync.replicas demo.
type Refusal struct {
	Topic     string `json:"topic"`
	Stopped   int    `json:"stopped"`
	AcksAll   string `json:"acks_all"`
	AcksOne   string `json:"acks_one"`
	AcksAll2  string `json:"acks_all_min_isr_2"` // acks=all again after min.insync.replicas goes back to 2
	Simulated bool   `json:"simulated"`
}

// Refuse creates a topic with min.insync.replicas=3, stops a node, and tries
// one write with acks=all and one with acks=1; it starts the node again.
func Refuse(ctx context.Context, cfg brewkit.Config, nodes brewkit.NodeControl, say func(string)) (Refusal, error) {
	var r Refusal
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return r, err
	}
	defer cl.Close()
	if r.Simulated, err = brewkit.IsSimulated(ctx, cl); err != nil {
		return r, err
	}
	var drop func(context.Context) error
	if r.Topic, drop, err = brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.acks-refuse.", Partitions: 1, Configs: map[string]string{"min.insync.replicas": "3"}}); err != nil {
		return r, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover demo topic is harmless
	// The second topic keeps the stand's min.insync.replicas, 2.
	second, dropSecond, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.acks-refuse.", Partitions: 1})
	if err != nil {
		return r, err
	}
	defer dropSecond(ctx) //nolint:errcheck // a leftover demo topic is harmless
	say(fmt.Sprintf("topic %s: 1 partition, 3 replicas, min.insync.replicas=3", r.Topic))
	if r.Simulated {
		say("(embedded simulation: no real ISR; the simulated one is the live nodes)")
	}
	_, followers, err := lab.Replicas(ctx, adm, r.Topic, 0)
	if err != nil {
		return r, err
	}
	stop := followers[0]
	if r.Simulated && stop == brewkit.SimulatedController {
		stop = followers[1] // the simulation cannot stop its controller
	}
	r.Stopped = int(stop)
	say(fmt.Sprintf("stopping node %d, a follower of partition 0", r.Stopped))
	if err := nodes.StopNode(ctx, r.Stopped, false); err != nil {
		return r, err
	}
	err = brewkit.WaitFor(ctx, 30*time.Second, 250*time.Millisecond, func() bool {
		isr, err := lab.ISR(ctx, adm, r.Topic, 0)
		return err == nil && len(isr) == 2
	})
	if err != nil {
		return r, fmt.Errorf("the ISR of %s did not shrink: %w", r.Topic, err)
	}
	r.AcksAll = try(ctx, cfg, r.Topic, kgo.AllISRAcks())
	say("acks=all  " + r.AcksAll)
	r.AcksOne = try(ctx, cfg, r.Topic, kgo.LeaderAck())
	say("acks=1    " + r.AcksOne)
	// The stand's own min ISR 2, on a second topic (made before the stop):
	// changing the first topic's min ISR while its replica is down and then
	// deleting it tripped the Kafka 4.2 controller when that node later
	// registered again ("existed in isrMembers, but not in the topics map").
	r.AcksAll2 = try(ctx, cfg, second, kgo.AllISRAcks())
	say("min.insync.replicas=2, the same node still down:")
	say("acks=all  " + r.AcksAll2)
	say(fmt.Sprintf("starting node %d", r.Stopped))
	return r, nodes.StartNode(ctx, r.Stopped)
}

// try writes one order with acks and says where it landed or why not. It
// writes without idempotence, which asks a broker for a producer id first:
// the demo is about the ISR rule alone.
func try(ctx context.Context, cfg brewkit.Config, topic string, acks kgo.Acks) string {
	cl, err := brewkit.NewClient(cfg, kgo.RequiredAcks(acks), kgo.DisableIdempotentWrite(),
		kgo.RecordRetries(3), kgo.RecordDeliveryTimeout(15*time.Second))
	if err != nil {
		return err.Error()
	}
	defer cl.Close()
	r, err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("order")}).First()
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("written at offset %d", r.Offset)
}

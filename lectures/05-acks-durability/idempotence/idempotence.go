// Package idempotence shows what the idempotent producer buys. A follower of
// the partition is paused (a hung broker), so the leader writes each acks=all
// batch and then waits for that follower until the produce request times out;
// the producer retries a batch the broker already has. Without idempotence
// every retry is stored again; with it the broker recognises the producer id
// and sequence number of a batch it already holds and stores nothing twice.
package idempotence

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/05-acks-durability/lab"
)

// Config is one run of the demo.
type Config struct {
	Records        int           // written while the follower is paused
	Pause          time.Duration // how long the follower stays paused; under broker.session.timeout.ms (9 s, after which the controller fences a silent node), so it stays in the ISR
	RequestTimeout time.Duration // how long the leader may wait for the ISR before answering REQUEST_TIMED_OUT
}

// Defaults: 100 orders over 4 s, 1 s produce request timeout.
var Defaults = Config{Records: 100, Pause: 4 * time.Second, RequestTimeout: time.Second}

// Mode is one producer's run.
type Mode struct {
	Idempotent bool        `json:"idempotent"`
	Settings   string      `json:"settings"`
	Topic      string      `json:"topic"`
	Paused     int32       `json:"paused_follower"`
	Acked      int         `json:"acked"`
	Failed     int         `json:"failed"`
	Stored     int         `json:"stored"`     // records read back
	Duplicated int         `json:"duplicated"` // extra copies: stored minus distinct
	Missing    int         `json:"missing"`    // acknowledged but not read back
	Batches    []lab.Batch `json:"batches"`
	Copies     []Copies    `json:"copies"` // the orders stored more than once, in order
}

// Copies is one order stored more than once.
type Copies struct {
	Order   int     `json:"order"`
	Offsets []int64 `json:"offsets"`
}

// Result is both runs, idempotence off, then on.
type Result struct {
	Simulated bool `json:"simulated"`
	Off, On   Mode
}

// Run runs the demo twice on the cluster behind cfg, pausing and resuming
// followers through nodes.
func Run(ctx context.Context, cfg brewkit.Config, nodes brewkit.NodeControl, c Config, say func(string)) (Result, error) {
	var res Result
	cl, _, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	if res.Simulated, err = brewkit.IsSimulated(ctx, cl); err != nil {
		return res, err
	}
	for _, idem := range []bool{false, true} {
		m, err := runMode(ctx, cfg, cl, nodes, c, idem, say)
		if err != nil {
			return res, err
		}
		if idem {
			res.On = m
		} else {
			res.Off = m
		}
	}
	return res, nil
}

func runMode(ctx context.Context, cfg brewkit.Config, cl *kgo.Client, nodes brewkit.NodeControl, c Config, idem bool, say func(string)) (Mode, error) {
	m := Mode{Idempotent: idem}
	adm := kadm.NewClient(cl)
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.idempotence.", Partitions: 1})
	if err != nil {
		return m, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover demo topic is harmless
	m.Topic = topic
	leader, followers, err := lab.Replicas(ctx, adm, topic, 0)
	if err != nil {
		return m, err
	}
	m.Paused = followers[0]

	prod, err := producer(cfg, c, idem, &m)
	if err != nil {
		return m, err
	}
	defer prod.Close()
	// The producer learns the cluster first: a request it sent to the
	// paused node would wait there.
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("warm-up")}).FirstErr(); err != nil {
		return m, fmt.Errorf("writing to %s: %w", topic, err)
	}

	say(fmt.Sprintf("%s: partition 0 led by node %d; pausing follower %d for %s", label(idem), leader, m.Paused, c.Pause))
	if err := nodes.PauseNode(ctx, int(m.Paused)); err != nil {
		return m, err
	}
	resumed := false
	resume := func() error {
		if resumed {
			return nil
		}
		resumed = true
		return nodes.ResumeNode(context.WithoutCancel(ctx), int(m.Paused))
	}
	defer resume() //nolint:errcheck // the error is reported on the main path

	run := strconv.FormatUint(uint64(time.Now().UnixNano()%1e9), 36)
	firstErr, err := send(ctx, prod, topic, run, c, &m)
	if err != nil {
		return m, err
	}
	say(fmt.Sprintf("%s: %d orders sent; resuming node %d", label(idem), c.Records, m.Paused))
	if err := resume(); err != nil {
		return m, err
	}
	if err := prod.Flush(ctx); err != nil {
		return m, err
	}
	if err := firstErr(); err != nil && !errors.Is(err, context.Canceled) {
		say(fmt.Sprintf("%s: %d writes failed, the first with %v", label(idem), m.Failed, err))
	}

	recs, err := lab.ReadAll(ctx, cfg, adm, topic)
	if err != nil {
		return m, err
	}
	m.count(recs, run, c.Records)
	if m.Batches, err = lab.Batches(ctx, cl, topic, 0, leader); err != nil {
		return m, err
	}
	m.Batches = m.Batches[1:] // the warm-up
	say(fmt.Sprintf("%s: %d acknowledged, %d stored, %d duplicated", label(idem), m.Acked, m.Stored, m.Duplicated))
	return m, nil
}

// producer is the demo's producer: acks=all, a short request timeout, a
// fixed retry back-off, idempotent (up to 5 requests in flight) or not (1).
func producer(cfg brewkit.Config, c Config, idem bool, m *Mode) (*kgo.Client, error) {
	opts := []kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProduceRequestTimeout(c.RequestTimeout),
		kgo.ProducerLinger(10 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 200 * time.Millisecond }),
	}
	m.Settings = fmt.Sprintf("acks=all, request timeout %s, ", c.RequestTimeout)
	if idem {
		m.Settings += "up to 5 requests in flight"
	} else {
		opts = append(opts, kgo.DisableIdempotentWrite())
		m.Settings += "1 request in flight"
	}
	return brewkit.NewClient(cfg, opts...)
}

// send produces c.Records orders spread over the pause, counting the
// acknowledged and the failed in m as their promises come; firstErr is the
// first failure so far (after a Flush, of them all).
func send(ctx context.Context, prod *kgo.Client, topic, run string, c Config, m *Mode) (firstErr func() error, err error) {
	var mu sync.Mutex
	var first error
	firstErr = func() error {
		mu.Lock()
		defer mu.Unlock()
		return first
	}
	every := c.Pause / time.Duration(c.Records+1)
	for i := 1; i <= c.Records; i++ {
		if err := brewkit.Sleep(ctx, every); err != nil {
			return nil, err
		}
		prod.Produce(ctx, &kgo.Record{Topic: topic, Value: lab.Seq(run, i)}, func(_ *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				m.Failed++
				if first == nil {
					first = err
				}
				return
			}
			m.Acked++
		})
	}
	return firstErr, brewkit.Sleep(ctx, every)
}

// count finds each order of run among recs: stored, duplicated (with the
// offsets of its copies), missing.
func (m *Mode) count(recs []*kgo.Record, run string, records int) {
	offsets := map[int][]int64{}
	for _, r := range recs {
		if n, ok := lab.SeqOf(r.Value, run); ok {
			offsets[n] = append(offsets[n], r.Offset)
		}
	}
	for n := 1; n <= records; n++ {
		m.Stored += len(offsets[n])
		if len(offsets[n]) > 1 {
			m.Duplicated += len(offsets[n]) - 1
			m.Copies = append(m.Copies, Copies{Order: n, Offsets: offsets[n]})
		}
	}
	m.Missing = m.Acked - len(offsets)
}

func label(idem bool) string {
	if idem {
		return "idempotence on "
	}
	return "idempotence off"
}

// Print writes both runs side by side, the orders stored more than once
// without idempotence, and the first batches with it.
func (r Result) Print(w io.Writer) {
	t := brewkit.NewTable(w, "IDEMPOTENCE", "ACKED", "FAILED", "STORED", "DUPLICATED", "PRODUCER ID")
	for _, m := range []Mode{r.Off, r.On} {
		pid := "none"
		if len(m.Batches) > 0 && m.Batches[0].ProducerID >= 0 {
			pid = fmt.Sprint(m.Batches[0].ProducerID)
		}
		t.Row(onOff(m.Idempotent), m.Acked, m.Failed, m.Stored, m.Duplicated, pid)
	}
	t.Flush()
	fmt.Fprintf(w, "\nidempotence off (%s): orders stored more than once\n", r.Off.Settings)
	t = brewkit.NewTable(w, "ORDER", "COPIES", "OFFSETS")
	for _, c := range r.Off.Copies {
		t.Row(c.Order, len(c.Offsets), fmt.Sprint(c.Offsets))
	}
	t.Flush()
	fmt.Fprintf(w, "\nidempotence on (%s): the first batches as stored\n", r.On.Settings)
	t = brewkit.NewTable(w, "OFFSET", "RECORDS", "PRODUCER ID", "EPOCH", "FIRST SEQ")
	for _, b := range r.On.Batches[:min(len(r.On.Batches), 4)] {
		t.Row(b.BaseOffset, b.Records, b.ProducerID, b.ProducerEpoch, b.FirstSequence)
	}
	t.Flush()
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// Package drill is the instructor's failover drill: it keeps producing keyed
// orders with acks=all while a consumer reads them, stops the leader of one
// partition, optionally stops a second node, starts everything again, and
// counts what was sent, acknowledged, read, lost and duplicated.
package failover

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/04-replication-isr/isr"
)

// Config sets up one drill.
type Config struct {
	Topic     string
	Partition int32         // whose leader is stopped
	Rate      int           // orders per second
	Steady    time.Duration // producing before the first stop and after the restarts
	Second    bool          // also stop a second node: acks=all must fail, acks=1 still writes
	Kill      bool          // SIGKILL instead of SIGTERM
}

// Defaults is the drill the Makefile runs.
var Defaults = Config{Topic: brewkit.Orders.Name, Partition: 0, Rate: 200, Steady: 3 * time.Second}

// Report is what one drill measured.
type Report struct {
	Run       string `json:"run"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Simulated bool   `json:"simulated"`
	Signal    string `json:"signal"`

	Stopped        int32         `json:"stopped"`       // the leader of Partition that was stopped
	NewLeader      int32         `json:"new_leader"`    // its leader afterwards
	ElectedAfter   time.Duration `json:"elected_after"` // from the stop until metadata showed the new leader
	ServingAfter   time.Duration `json:"serving_after"` // from the stop until the new leader acknowledged a write
	ISRBefore      []int32       `json:"isr_before"`
	ISRAfter       []int32       `json:"isr_after"`
	ISRShrunkAfter time.Duration `json:"isr_shrunk_after"` // from the stop until the ISR dropped the node

	Second        int32  `json:"second,omitempty"` // the second node stopped, 0 if none
	AcksAllErr    string `json:"acks_all_error,omitempty"`
	AcksOneOffset int64  `json:"acks_one_offset,omitempty"` // where the acks=1 write landed; -1 if it failed
	AcksOneErr    string `json:"acks_one_error,omitempty"`

	ISRFullAfter time.Duration `json:"isr_full_after"` // from the first restart until every partition is fully in sync

	Sent       int64         `json:"sent"`
	Acked      int64         `json:"acked"`
	Failed     int64         `json:"failed"`
	Read       int64         `json:"read"`
	Lost       int64         `json:"lost"`       // acknowledged, never read
	Duplicated int64         `json:"duplicated"` // extra copies in the log: one order at two offsets
	SlowAcks   int64         `json:"slow_acks"`  // acknowledged after more than a second
	MaxAck     time.Duration `json:"max_ack"`

	// Timeline samples the drilled partition and the acknowledged orders
	// every quarter second; Events are what the drill did, when.
	Timeline []Sample `json:"timeline"`
	Events   []Event  `json:"events"`
}

// Sample is the drilled partition and the orders acknowledged so far at one moment.
type Sample struct {
	At     time.Duration `json:"at"`     // since the drill began
	Leader int32         `json:"leader"` // -1: no leader
	ISR    []int32       `json:"isr"`
	Acked  int64         `json:"acked"`
}

// Event is one step of the drill, for the timeline's markers.
type Event struct {
	At   time.Duration `json:"at"`
	What string        `json:"what"`
}

// Run performs the drill on the cluster behind cfg, stopping and starting
// nodes through nodes. say receives the narrative as it happens.
func Run(ctx context.Context, c Config, cfg brewkit.Config, nodes brewkit.NodeControl, say func(string)) (Report, error) {
	// The consumer's fetch error ends the drill at once: without it nothing
	// can be counted.
	ctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	rep, err := run(ctx, fail, c, cfg, nodes, say)
	var fe *fetchError
	if errors.As(context.Cause(ctx), &fe) {
		return rep, fmt.Errorf("the drill's consumer stopped, so nothing can be counted (start any node it stopped with `make restore`): %w", fe.err)
	}
	return rep, err
}

// fetchError is the consumer's reason to stop the drill.
type fetchError struct{ err error }

func (e *fetchError) Error() string { return e.err.Error() }

func run(ctx context.Context, fail context.CancelCauseFunc, c Config, cfg brewkit.Config, nodes brewkit.NodeControl, say func(string)) (Report, error) {
	if c.Rate <= 0 || c.Steady <= 0 {
		return Report{}, errors.New("rate and steady time must be positive")
	}
	d := newDrill(c, cfg, nodes, say)
	admCl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return d.rep, err
	}
	defer admCl.Close()
	d.adm = adm
	if err := d.choosePartition(ctx, admCl); err != nil {
		return d.rep, err
	}
	defer d.stopTraffic()
	if err := d.startTraffic(ctx, fail); err != nil {
		return d.rep, err
	}
	if err := d.stopLeader(ctx); err != nil {
		return d.rep, err
	}
	if c.Second {
		if err := d.stopSecondNode(ctx); err != nil {
			return d.rep, err
		}
	}
	if err := d.restartNodes(ctx); err != nil {
		return d.rep, err
	}
	err = d.count(ctx)
	return d.rep, err
}

// drill is one run of the drill: the cluster, the traffic, and the report
// it fills in as it goes.
type drill struct {
	c     Config
	cfg   brewkit.Config
	nodes brewkit.NodeControl
	adm   *kadm.Client
	start time.Time
	say   func(string)
	rep   Report

	tally    *tally
	writes   *writeWatch
	consumer *consumer
	prod     *producer
	sampler  *sampler
}

func newDrill(c Config, cfg brewkit.Config, nodes brewkit.NodeControl, say func(string)) *drill {
	rep := Report{Run: strconv.FormatUint(rand.Uint64()%1e6, 36), Topic: c.Topic, Partition: c.Partition, Signal: "SIGTERM", AcksOneOffset: -1}
	if c.Kill {
		rep.Signal = "SIGKILL"
	}
	return &drill{c: c, cfg: cfg, nodes: nodes, start: time.Now(), say: say, rep: rep}
}

// step narrates one event, stamped with the seconds since the drill began.
func (d *drill) step(format string, args ...any) {
	d.say(fmt.Sprintf("%6.1fs  ", time.Since(d.start).Seconds()) + fmt.Sprintf(format, args...))
}

// mark notes an event for the timeline.
func (d *drill) mark(what string) {
	d.rep.Events = append(d.rep.Events, Event{At: time.Since(d.start), What: what})
}

// partition returns the drilled partition as the metadata shows it now.
func (d *drill) partition(ctx context.Context) (isr.Partition, error) {
	t, err := isr.Partitions(ctx, d.adm, d.c.Topic)
	return part(t, d.rep.Partition), err
}

// choosePartition makes sure the topic exists with every replica in sync,
// and notes the drilled partition's leader (the node to stop) and its ISR.
func (d *drill) choosePartition(ctx context.Context, cl *kgo.Client) error {
	var err error
	if d.rep.Simulated, err = brewkit.IsSimulated(ctx, cl); err != nil {
		return err
	}
	if _, err := brewkit.EnsureTopics(ctx, d.adm, brewkit.TopicNamed(d.c.Topic, 6)); err != nil {
		return err
	}
	before, err := isr.Partitions(ctx, d.adm, d.c.Topic)
	if err != nil {
		return err
	}
	if !before.FullyReplicated() {
		return fmt.Errorf("%s is not fully replicated (%d partitions under-replicated): start every node first (make restore)", d.c.Topic, before.UnderReplicated())
	}
	if d.rep.Simulated {
		// kfake cannot stop its controller: drill a partition that node 3 does not lead.
		if p := partitionNotLedBy(before, brewkit.SimulatedController, d.c.Partition); p != d.c.Partition {
			d.step("embedded simulation: node %d (the fixed controller) leads partition %d; drilling partition %d instead", brewkit.SimulatedController, d.c.Partition, p)
			d.rep.Partition = p
		}
	}
	p0 := part(before, d.rep.Partition)
	d.rep.Stopped, d.rep.ISRBefore = p0.Leader, p0.ISR
	return nil
}

// startTraffic starts a consumer at today's end offsets, so that it reads
// exactly this run, and a producer writing c.Rate orders a second with
// acks=all, and lets them work for c.Steady. A consumer's fetch error goes
// to fail.
func (d *drill) startTraffic(ctx context.Context, fail context.CancelCauseFunc) error {
	ends, err := brewkit.EndOffsets(ctx, d.adm, d.c.Topic)
	if err != nil {
		return err
	}
	d.tally = newTally()
	d.consumer, err = startConsumer(ctx, d.cfg, d.c.Topic, ends, d.rep.Run, d.tally, func(err error) { fail(&fetchError{err}) })
	if err != nil {
		return err
	}
	d.writes = newWriteWatch(d.c.Topic, d.rep.Partition)
	d.prod, err = startProducer(ctx, d.cfg, d.c, d.rep.Run, d.writes, d.tally)
	if err != nil {
		return err
	}
	d.sampler = startSampler(ctx, d)
	d.step("producing %d orders/s with acks=all (idempotent) to %s; a consumer reads them", d.c.Rate, d.c.Topic)
	d.step("partition %d: leader %d, ISR %v", d.rep.Partition, d.rep.Stopped, d.rep.ISRBefore)
	return brewkit.Sleep(ctx, d.c.Steady)
}

// stopTraffic stops whatever startTraffic started: the producer, then the
// consumer and the sampler.
func (d *drill) stopTraffic() {
	if d.prod != nil {
		d.prod.stop()
	}
	if d.sampler != nil {
		d.sampler.stop()
	}
	if d.consumer != nil {
		d.consumer.stop()
	}
}

// stopLeader is step 1: it stops the partition's leader, waits for a new
// leader that acknowledges writes and for the ISR without the stopped node,
// and lets the traffic run for c.Steady.
func (d *drill) stopLeader(ctx context.Context) error {
	d.step("stopping node %d, the leader of partition %d (%s)", d.rep.Stopped, d.rep.Partition, d.rep.Signal)
	d.mark(fmt.Sprintf("stop node %d, the leader", d.rep.Stopped))
	stopAt := time.Now()
	d.writes.since(stopAt, d.rep.Stopped)
	// Watch the metadata while the node stops: a graceful stop hands
	// leadership over before the process exits.
	stopped := make(chan error, 1)
	go func() { stopped <- d.nodes.StopNode(ctx, int(d.rep.Stopped), d.c.Kill) }()
	err := d.watchFailover(ctx, stopAt)
	if stopErr := <-stopped; stopErr != nil {
		return fmt.Errorf("stopping node %d: %w", d.rep.Stopped, stopErr)
	}
	if err != nil {
		return fmt.Errorf("after stopping node %d: %w", d.rep.Stopped, err)
	}
	if err := d.waitServing(ctx); err != nil {
		return err
	}
	return brewkit.Sleep(ctx, d.c.Steady)
}

// watchFailover polls the metadata from stopAt until the partition has a new
// leader and its ISR no longer holds the stopped node, noting when each happened.
func (d *drill) watchFailover(ctx context.Context, stopAt time.Time) error {
	return brewkit.WaitFor(ctx, 60*time.Second, poll, func() bool {
		p, err := d.partition(ctx)
		if err != nil {
			return false // a broker may be in the middle of leaving
		}
		if d.rep.ElectedAfter == 0 && p.Leader >= 0 && p.Leader != d.rep.Stopped {
			d.rep.ElectedAfter, d.rep.NewLeader = time.Since(stopAt), p.Leader
			d.step("partition %d: node %d is the new leader (epoch %d)", d.rep.Partition, p.Leader, p.Epoch)
		}
		if d.rep.ISRShrunkAfter == 0 && !slices.Contains(p.ISR, d.rep.Stopped) {
			d.rep.ISRShrunkAfter, d.rep.ISRAfter = time.Since(stopAt), p.ISR
			d.step("partition %d: ISR %v -> %v", d.rep.Partition, d.rep.ISRBefore, p.ISR)
		}
		return d.rep.ElectedAfter > 0 && d.rep.ISRShrunkAfter > 0
	})
}

// waitServing waits for the first write to the partition that a broker
// other than the stopped leader acknowledges.
func (d *drill) waitServing(ctx context.Context) error {
	if err := brewkit.WaitFor(ctx, 60*time.Second, poll, func() bool { return d.writes.served() > 0 }); err != nil {
		return fmt.Errorf("no write to partition %d was acknowledged by a new leader: %w", d.rep.Partition, err)
	}
	d.rep.ServingAfter = d.writes.served()
	d.step("partition %d: node %d acknowledges writes, %s after the stop was issued", d.rep.Partition, d.rep.NewLeader, d.rep.ServingAfter.Round(time.Millisecond))
	return nil
}

// stopSecondNode is step 2 (with c.Second): with the producer paused, it
// stops one more replica, leaving the partition below min.insync.replicas,
// and probes one write with acks=all (refused) and one with acks=1 (written).
func (d *drill) stopSecondNode(ctx context.Context) error {
	d.prod.pause()
	d.rep.Second = secondNode(d.rep)
	d.step("pausing the producer; stopping node %d as well (%s)", d.rep.Second, d.rep.Signal)
	d.mark(fmt.Sprintf("pause the producer, stop node %d", d.rep.Second))
	if err := d.nodes.StopNode(ctx, int(d.rep.Second), d.c.Kill); err != nil {
		return fmt.Errorf("stopping node %d: %w", d.rep.Second, err)
	}
	err := brewkit.WaitFor(ctx, 60*time.Second, poll, func() bool {
		p, err := d.partition(ctx)
		return err == nil && len(p.ISR) == 1
	})
	if err != nil {
		return fmt.Errorf("after stopping node %d: %w", d.rep.Second, err)
	}
	d.rep.AcksAllErr = probe(ctx, d.cfg, d.c.Topic, d.rep.Partition, kgo.AllISRAcks(), d.rep.Run).err
	d.step("acks=all to partition %d: %s", d.rep.Partition, orOK(d.rep.AcksAllErr))
	one := probe(ctx, d.cfg, d.c.Topic, d.rep.Partition, kgo.LeaderAck(), d.rep.Run)
	d.rep.AcksOneErr, d.rep.AcksOneOffset = one.err, one.offset
	d.step("acks=1   to partition %d: %s", d.rep.Partition, orOK(one.String()))
	d.mark(fmt.Sprintf("acks=all %s, acks=1 %s", outcome(d.rep.AcksAllErr), outcome(one.err)))
	return nil
}

// restartNodes is step 3: it starts every stopped node again, waits until
// every partition has its full ISR, and lets the producer write for c.Steady.
func (d *drill) restartNodes(ctx context.Context) error {
	restartAt := time.Now()
	for _, n := range []int32{d.rep.Second, d.rep.Stopped} {
		if n == 0 {
			continue
		}
		d.step("starting node %d", n)
		d.mark(fmt.Sprintf("start node %d", n))
		if err := d.nodes.StartNode(ctx, int(n)); err != nil {
			return fmt.Errorf("starting node %d: %w", n, err)
		}
	}
	err := brewkit.WaitFor(ctx, 120*time.Second, poll, func() bool {
		t, err := isr.Partitions(ctx, d.adm, d.c.Topic)
		return err == nil && t.FullyReplicated()
	})
	if err != nil {
		return fmt.Errorf("the ISR did not fill up again: %w", err)
	}
	d.rep.ISRFullAfter = time.Since(restartAt)
	d.mark("full ISR, producer resumed")
	d.step("every partition of %s has its full ISR again, %s after the first restart", d.c.Topic, d.rep.ISRFullAfter.Round(time.Millisecond))
	d.prod.resume()
	return brewkit.Sleep(ctx, d.c.Steady)
}

// count is step 4: it stops producing, lets the consumer read every
// acknowledged order (up to 30 s), and counts.
func (d *drill) count(ctx context.Context) error {
	d.prod.stop()
	d.mark("producer stopped")
	d.step("producer stopped; waiting for the consumer to read every acknowledged order")
	_ = brewkit.WaitFor(ctx, 30*time.Second, poll, d.tally.allAckedRead)
	d.consumer.stop()
	if err := ctx.Err(); err != nil {
		return err
	}
	d.tally.fill(&d.rep)
	d.rep.Timeline = d.sampler.stop()
	d.step("sent %d, acknowledged %d, read %d, lost %d, duplicated %d", d.rep.Sent, d.rep.Acked, d.rep.Read, d.rep.Lost, d.rep.Duplicated)
	return nil
}

func part(t isr.Topic, id int32) isr.Partition {
	for _, p := range t.Partitions {
		if p.ID == id {
			return p
		}
	}
	return isr.Partition{ID: id, Leader: -1}
}

func partitionNotLedBy(t isr.Topic, node, want int32) int32 {
	if part(t, want).Leader != node {
		return want
	}
	for _, p := range t.Partitions {
		if p.Leader != node {
			return p.ID
		}
	}
	return want
}

// secondNode picks a live replica of the partition other than its leader, so
// the leader stays and answers with the error; never the simulation's controller.
func secondNode(rep Report) int32 {
	for _, n := range rep.ISRAfter {
		if n != rep.NewLeader && n != rep.Stopped && !(rep.Simulated && n == brewkit.SimulatedController) {
			return n
		}
	}
	for _, n := range rep.ISRAfter {
		if n != rep.Stopped && !(rep.Simulated && n == brewkit.SimulatedController) {
			return n
		}
	}
	return rep.NewLeader
}

// outcome is a probe's result in a word, for the timeline.
func outcome(err string) string {
	if err != "" {
		return "refused"
	}
	return "written"
}

func orOK(s string) string {
	if s == "" {
		return "ok"
	}
	return s
}

// poll is how often the drill looks at the cluster while it waits.
const poll = 250 * time.Millisecond

// writeWatch notes when a broker other than the stopped leader first
// acknowledges a batch for the drilled partition.
type writeWatch struct {
	topic     string
	partition int32

	mu      sync.Mutex
	from    time.Time
	old     int32
	firstAt time.Duration // since from, when another broker first acknowledged
}

func newWriteWatch(topic string, partition int32) *writeWatch {
	return &writeWatch{topic: topic, partition: partition, old: -1}
}

func (w *writeWatch) since(t time.Time, old int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.from, w.old = t, old
}

func (w *writeWatch) served() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.firstAt
}

// OnProduceBatchWritten implements kgo.HookProduceBatchWritten.
func (w *writeWatch) OnProduceBatchWritten(meta kgo.BrokerMetadata, topic string, partition int32, _ kgo.ProduceBatchMetrics) {
	if topic != w.topic || partition != w.partition {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.from.IsZero() && w.firstAt == 0 && meta.NodeID != w.old {
		w.firstAt = time.Since(w.from)
	}
}

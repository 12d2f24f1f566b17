// Package drill is the instructor's failover drill: it keeps producing keyed
// orders with acks=all while a consumer reads them, stops the leader of one
// partition, optionally stops a second node, starts everything again, and
// counts what was sent, acknowledged, read, lost and duplicated.
package drill

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

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
}

// Run performs the drill on the cluster behind cfg, stopping and starting
// nodes through nodes. say receives the narrative as it happens.
func Run(ctx context.Context, c Config, cfg brewkit.Config, nodes brewkit.Nodes, say func(string)) (Report, error) {
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

func run(ctx context.Context, fail context.CancelCauseFunc, c Config, cfg brewkit.Config, nodes brewkit.Nodes, say func(string)) (Report, error) {
	if c.Rate <= 0 || c.Steady <= 0 {
		return Report{}, errors.New("rate and steady time must be positive")
	}
	start := time.Now()
	step := func(format string, args ...any) {
		say(fmt.Sprintf("%6.1fs  ", time.Since(start).Seconds()) + fmt.Sprintf(format, args...))
	}
	rep := Report{Run: strconv.FormatUint(rand.Uint64()%1e6, 36), Topic: c.Topic, Partition: c.Partition, Signal: "SIGTERM", AcksOneOffset: -1}
	if c.Kill {
		rep.Signal = "SIGKILL"
	}

	admCl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return rep, err
	}
	defer admCl.Close()
	if rep.Simulated, err = brewkit.IsSimulated(ctx, admCl); err != nil {
		return rep, err
	}
	if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.TopicNamed(c.Topic, 6)); err != nil {
		return rep, err
	}
	before, err := isr.Partitions(ctx, adm, c.Topic)
	if err != nil {
		return rep, err
	}
	if !before.FullyReplicated() {
		return rep, fmt.Errorf("%s is not fully replicated (%d partitions under-replicated): start every node first (make restore)", c.Topic, before.UnderReplicated())
	}
	if rep.Simulated {
		// kfake cannot stop its controller: drill a partition that node 3 does not lead.
		if p := partitionNotLedBy(before, brewkit.SimulatedController, c.Partition); p != c.Partition {
			step("embedded simulation: node %d (the fixed controller) leads partition %d; drilling partition %d instead", brewkit.SimulatedController, c.Partition, p)
			rep.Partition = p
		}
	}
	p0 := part(before, rep.Partition)
	rep.Stopped, rep.ISRBefore = p0.Leader, p0.ISR

	// The consumer starts at today's end offsets, so it reads exactly this run.
	ends, err := brewkit.EndOffsets(ctx, adm, c.Topic)
	if err != nil {
		return rep, err
	}
	tally := newTally()
	consumer, err := startConsumer(ctx, cfg, c.Topic, ends, rep.Run, tally, func(err error) { fail(&fetchError{err}) })
	if err != nil {
		return rep, err
	}
	defer consumer.stop()

	writes := newWriteWatch(c.Topic, rep.Partition)
	prod, err := startProducer(ctx, cfg, c, rep.Run, writes, tally)
	if err != nil {
		return rep, err
	}
	defer prod.stop()
	step("producing %d orders/s with acks=all (idempotent) to %s; a consumer reads them", c.Rate, c.Topic)
	step("partition %d: leader %d, ISR %v", rep.Partition, p0.Leader, p0.ISR)
	if err := brewkit.Sleep(ctx, c.Steady); err != nil {
		return rep, err
	}

	// 1. Stop the partition's leader.
	step("stopping node %d, the leader of partition %d (%s)", rep.Stopped, rep.Partition, rep.Signal)
	stopAt := time.Now()
	writes.since(stopAt, rep.Stopped)
	// Watch the metadata while the node stops: a graceful stop hands
	// leadership over before the process exits.
	stopped := make(chan error, 1)
	go func() { stopped <- nodes.StopNode(ctx, int(rep.Stopped), c.Kill) }()
	err = brewkit.WaitFor(ctx, 60*time.Second, poll, func() bool {
		t, err := isr.Partitions(ctx, adm, c.Topic)
		if err != nil {
			return false // a broker may be in the middle of leaving
		}
		p := part(t, rep.Partition)
		if rep.ElectedAfter == 0 && p.Leader >= 0 && p.Leader != rep.Stopped {
			rep.ElectedAfter, rep.NewLeader = time.Since(stopAt), p.Leader
			step("partition %d: node %d is the new leader (epoch %d)", rep.Partition, p.Leader, p.Epoch)
		}
		if rep.ISRShrunkAfter == 0 && !slices.Contains(p.ISR, rep.Stopped) {
			rep.ISRShrunkAfter, rep.ISRAfter = time.Since(stopAt), p.ISR
			step("partition %d: ISR %v -> %v", rep.Partition, rep.ISRBefore, p.ISR)
		}
		return rep.ElectedAfter > 0 && rep.ISRShrunkAfter > 0
	})
	if stopErr := <-stopped; stopErr != nil {
		return rep, fmt.Errorf("stopping node %d: %w", rep.Stopped, stopErr)
	}
	if err != nil {
		return rep, fmt.Errorf("after stopping node %d: %w", rep.Stopped, err)
	}
	if err := brewkit.WaitFor(ctx, 60*time.Second, poll, func() bool { return writes.served() > 0 }); err != nil {
		return rep, fmt.Errorf("no write to partition %d was acknowledged by a new leader: %w", rep.Partition, err)
	}
	rep.ServingAfter = writes.served()
	step("partition %d: node %d acknowledges writes, %s after the stop was issued", rep.Partition, rep.NewLeader, rep.ServingAfter.Round(time.Millisecond))
	if err := brewkit.Sleep(ctx, c.Steady); err != nil {
		return rep, err
	}

	// 2. Optionally stop a second node: below min.insync.replicas.
	if c.Second {
		prod.pause()
		rep.Second = secondNode(rep)
		step("pausing the producer; stopping node %d as well (%s)", rep.Second, rep.Signal)
		if err := nodes.StopNode(ctx, int(rep.Second), c.Kill); err != nil {
			return rep, fmt.Errorf("stopping node %d: %w", rep.Second, err)
		}
		err := brewkit.WaitFor(ctx, 60*time.Second, poll, func() bool {
			t, err := isr.Partitions(ctx, adm, c.Topic)
			return err == nil && len(part(t, rep.Partition).ISR) == 1
		})
		if err != nil {
			return rep, fmt.Errorf("after stopping node %d: %w", rep.Second, err)
		}
		rep.AcksAllErr = probe(ctx, cfg, c.Topic, rep.Partition, kgo.AllISRAcks(), rep.Run).err
		step("acks=all to partition %d: %s", rep.Partition, orOK(rep.AcksAllErr))
		one := probe(ctx, cfg, c.Topic, rep.Partition, kgo.LeaderAck(), rep.Run)
		rep.AcksOneErr, rep.AcksOneOffset = one.err, one.offset
		step("acks=1   to partition %d: %s", rep.Partition, orOK(one.String()))
	}

	// 3. Start everything again and wait for a full ISR.
	restartAt := time.Now()
	for _, n := range []int32{rep.Second, rep.Stopped} {
		if n == 0 {
			continue
		}
		step("starting node %d", n)
		if err := nodes.StartNode(ctx, int(n)); err != nil {
			return rep, fmt.Errorf("starting node %d: %w", n, err)
		}
	}
	err = brewkit.WaitFor(ctx, 120*time.Second, poll, func() bool {
		t, err := isr.Partitions(ctx, adm, c.Topic)
		return err == nil && t.FullyReplicated()
	})
	if err != nil {
		return rep, fmt.Errorf("the ISR did not fill up again: %w", err)
	}
	rep.ISRFullAfter = time.Since(restartAt)
	step("every partition of %s has its full ISR again, %s after the first restart", c.Topic, rep.ISRFullAfter.Round(time.Millisecond))
	prod.resume()
	if err := brewkit.Sleep(ctx, c.Steady); err != nil {
		return rep, err
	}

	// 4. Stop producing, let the consumer catch up, count.
	prod.stop()
	step("producer stopped; waiting for the consumer to read every acknowledged order")
	_ = brewkit.WaitFor(ctx, 30*time.Second, poll, tally.allAckedRead)
	consumer.stop()
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	tally.fill(&rep)
	step("sent %d, acknowledged %d, read %d, lost %d, duplicated %d", rep.Sent, rep.Acked, rep.Read, rep.Lost, rep.Duplicated)
	return rep, nil
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

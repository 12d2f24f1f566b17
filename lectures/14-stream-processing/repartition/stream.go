package repartition

import (
	"container/heap"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// ReadLimit bounds how long a stage may take to read its inputs to their end.
const ReadLimit = time.Minute

// event is one input record of a stage: an order, or a payment with its id.
type event struct {
	brewkit.Event
	payment string // the payment's id; "" for an order
}

// feed is one input partition of a stage: the records fetched and not yet
// processed, in offset order, and how far it is read. A stage reads what
// its inputs hold when it starts, up to end, and stops there; a real
// processor would go on reading for ever.
type feed struct {
	topic     string
	partition int32
	end       int64 // the end offset when the stage started
	next      int64 // the offset of the next record to fetch
	queue     []event
	decode    func(*kgo.Record) (event, error)
}

// feeds makes a feed for each partition of topic listed in ends, by partition.
func feeds(topic string, ends kadm.ListedOffsets, decode func(*kgo.Record) (event, error)) []*feed {
	var fs []*feed
	ends.Each(func(o kadm.ListedOffset) {
		if o.Topic == topic {
			fs = append(fs, &feed{topic: topic, partition: o.Partition, end: o.Offset, decode: decode})
		}
	})
	slices.SortFunc(fs, func(a, b *feed) int { return int(a.partition - b.partition) })
	return fs
}

// earliest takes the next record a task processes from its feeds: the head
// with the earliest event time (the earlier feed's on a tie). It returns
// false while a feed that has more to come has nothing buffered, since its
// next record may be the earliest: the task waits for it, as a Kafka
// Streams task waits for an empty input (max.task.idle.ms) before it lets
// stream time run ahead of it. So a task processes the same records in
// the same order however the fetches happen to interleave its inputs: the
// counts of a run are the same on every run. It returns false, too, once
// every feed is done.
func earliest(fs []*feed) (event, bool) {
	var best *feed
	for _, f := range fs {
		if len(f.queue) == 0 {
			if f.next < f.end {
				return event{}, false
			}
			continue
		}
		if best == nil || f.queue[0].At.Before(best.queue[0].At) {
			best = f
		}
	}
	if best == nil {
		return event{}, false
	}
	e := best.queue[0]
	best.queue = best.queue[1:]
	return e, true
}

// consume reads every feed from its start to its end with cl, which
// consumes nothing else yet, putting each poll's records on their feeds
// and calling step after each poll.
func consume(ctx context.Context, cl *kgo.Client, fs []*feed, step func() error) error {
	byTP := map[string]map[int32]*feed{}
	from := map[string]map[int32]kgo.Offset{}
	left := 0
	for _, f := range fs {
		if byTP[f.topic] == nil {
			byTP[f.topic], from[f.topic] = map[int32]*feed{}, map[int32]kgo.Offset{}
		}
		byTP[f.topic][f.partition] = f
		if f.next < f.end {
			from[f.topic][f.partition] = kgo.NewOffset().AtStart()
			left++
		}
	}
	if left == 0 {
		return step()
	}
	cl.AddConsumePartitions(from)
	rctx, cancel := context.WithTimeout(ctx, ReadLimit)
	defer cancel()
	var check brewkit.FetchCheck
	for left > 0 {
		fetches, err := check.Poll(rctx, cl, 0)
		if err := ctx.Err(); err != nil {
			return err
		}
		if rctx.Err() != nil {
			var behind []string
			for _, f := range fs {
				if f.next < f.end {
					behind = append(behind, fmt.Sprintf("%s/%d", f.topic, f.partition))
				}
			}
			return fmt.Errorf("partitions %v not read to their end within %s", behind, ReadLimit)
		}
		if err != nil {
			return err
		}
		var derr error
		fetches.EachRecord(func(r *kgo.Record) {
			f := byTP[r.Topic][r.Partition]
			if derr != nil || f == nil || r.Offset < f.next || r.Offset >= f.end {
				return
			}
			e, err := f.decode(r)
			if err != nil {
				derr = err
				return
			}
			f.queue = append(f.queue, e)
			if f.next = r.Offset + 1; f.next >= f.end {
				left--
			}
		})
		if derr != nil {
			return derr
		}
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// producing collects the first error of a client's asynchronous writes.
type producing struct {
	mu  sync.Mutex
	err error
}

func (p *producing) done(r *kgo.Record, err error) {
	if err == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = fmt.Errorf("writing to %s: %w", r.Topic, err)
	}
}

// flush waits for cl's writes and returns the first that failed.
func (p *producing) flush(ctx context.Context, cl *kgo.Client) error {
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Repartition is the repartition stage: it reads the payments in topic
// from, keyed by payment id, and writes each, keyed by its shop, to topic
// to, which must have as many partitions as the orders' topic. It returns
// how many payments it re-keyed.
//
// The partition is chosen by ShopPartition, the till's own rule for orders,
// not by the default partitioner: co-partitioning needs the same key, the
// same partition count AND the same key-to-partition function on both
// sides. The till places shop n's orders on partition (n-1) mod 6 itself,
// so partition p of the repartition topic holds the payments of exactly the
// shops whose orders are on partition p of the orders, only if the stage
// chooses the same way. Had the till left its orders to the default
// partitioner (murmur2 of the shop), this stage would use it too, and the
// same key and count would then suffice: both sides would compute
// murmur2(shop) mod 6. That is why Kafka Streams checks only the partition
// counts of a join's inputs: it assumes every producer used the default.
//
// The stage is one task over all the payments' partitions and takes the
// earliest payment of its inputs first (see earliest), so each partition of
// the repartition topic comes out in event-time order, as each payments
// partition was written. Kafka Streams would run one task per payments
// partition and interleave their writes as they come; the join's buffering
// would have to absorb that disorder.
func Repartition(ctx context.Context, cfg brewkit.Config, from, to string) (int, error) {
	cl, err := brewkit.NewClient(cfg, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := brewkit.EndOffsets(ctx, adm, from)
	if err != nil {
		return 0, err
	}
	out, err := brewkit.EndOffsets(ctx, adm, to)
	if err != nil {
		return 0, err
	}
	partitions := int32(len(out[to]))
	in := feeds(from, ends, decodePayment)
	var w producing
	rekeyed := 0
	err = consume(ctx, cl, in, func() error {
		for {
			p, ok := earliest(in)
			if !ok {
				return nil
			}
			part, err := ShopPartition(p.ShopID, partitions)
			if err != nil {
				return fmt.Errorf("payment %s: %w", p.payment, err)
			}
			r := p.Record(to)
			r.Key, r.Partition = []byte(p.ShopID), part
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: paymentHeader, Value: []byte(p.payment)})
			cl.Produce(ctx, r, w.done)
			rekeyed++
		}
	})
	if err != nil {
		return rekeyed, fmt.Errorf("repartitioning %s: %w", from, err)
	}
	return rekeyed, w.flush(ctx, cl)
}

// JoinSpec names the join stage's topics.
type JoinSpec struct {
	Orders   string // keyed by shop, shop n on partition (n-1) mod its partitions
	Payments string // must be co-partitioned with Orders: the repartition topic
	Output   string // where joined orders go, keyed by shop
	// Unchecked joins inputs whose partition counts differ, partition p
	// with partition p (a partition with no counterpart joins nothing):
	// the wrong way, to count what it misses.
	Unchecked bool
}

// Streamed is what the join stage decided.
type Streamed struct {
	Counts
	Tasks   int // one per partition: partition p of both inputs
	Evicted int // orders the stores dropped as stream time passed their retention, before the input ended
	Waited  int // payments read before their order, which waited for it and found it
}

// Join is the join stage. One client reads partition p of both inputs
// for every p (kgo.ConsumePartitions): one task per partition, which is
// what a consumer group of both topics gives each member when its assignor
// keeps partition p of both together, as Kafka Streams' does. Each task
// joins its payments with its orders within Window, in event time (see
// task), and writes each joined order to spec.Output.
//
// When the input ends the tasks close every window as if stream time had
// moved past it: the orders still stored unpaid are counted unpaid, the
// payments still waiting for an order name an unknown one.
func Join(ctx context.Context, cfg brewkit.Config, spec JoinSpec) (Streamed, error) {
	cl, err := brewkit.NewClient(cfg) // the output: keyed by shop, the default partitioner
	if err != nil {
		return Streamed{}, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	oends, err := brewkit.EndOffsets(ctx, adm, spec.Orders)
	if err != nil {
		return Streamed{}, err
	}
	pends, err := brewkit.EndOffsets(ctx, adm, spec.Payments)
	if err != nil {
		return Streamed{}, err
	}
	orders, payments := feeds(spec.Orders, oends, decodeOrder), feeds(spec.Payments, pends, decodePayment)
	if len(orders) != len(payments) && !spec.Unchecked {
		// Kafka Streams refuses such a topology at start
		// (TopologyException: topics not co-partitioned).
		return Streamed{}, fmt.Errorf("%s has %d partitions and %s %d: they are not co-partitioned, so partition p of one does not hold the shops of partition p of the other; repartition first",
			spec.Orders, len(orders), spec.Payments, len(payments))
	}
	var w producing
	emit := func(j Joined) {
		v, err := json.Marshal(j)
		if err != nil {
			panic(err) // a Joined always marshals
		}
		cl.Produce(ctx, &kgo.Record{Topic: spec.Output, Key: []byte(j.ShopID), Value: v}, w.done)
	}
	var tasks []*task
	var all []*feed
	for p := range max(len(orders), len(payments)) {
		t := newTask(emit, feedAt(orders, p, spec.Orders), feedAt(payments, p, spec.Payments))
		tasks = append(tasks, t)
		all = append(all, t.feeds...)
	}
	err = consume(ctx, cl, all, func() error {
		for _, t := range tasks {
			for {
				e, ok := earliest(t.feeds)
				if !ok {
					break
				}
				t.process(e)
			}
		}
		return nil
	})
	if err != nil {
		return Streamed{}, fmt.Errorf("joining %s with %s: %w", spec.Orders, spec.Payments, err)
	}
	s := Streamed{Tasks: len(tasks)}
	for _, t := range tasks {
		t.finish()
		s.Matched += t.counts.Matched
		s.TooLate += t.counts.TooLate
		s.UnknownOrder += t.counts.UnknownOrder
		s.Unpaid += t.counts.Unpaid
		s.Evicted += t.evicted
		s.Waited += t.waited
	}
	return s, w.flush(ctx, cl)
}

// feedAt is fs's partition p, or an empty feed when the topic has no
// partition p.
func feedAt(fs []*feed, p int, topic string) *feed {
	if p < len(fs) {
		return fs[p]
	}
	return &feed{topic: topic, partition: int32(p)}
}

// task joins partition p of the orders with partition p of the payments.
// It holds the orders it has read in a store for Retention after their
// event time, and the payments whose order it has not read yet for Wait
// after theirs; both expire by stream time, the newest event time the
// task has processed on either input, never by the wall clock, so a
// replay of old records decides as the live run did.
type task struct {
	feeds   []*feed // the orders' partition, then the payments'
	stream  time.Time
	store   map[string]*stored // the window store: orders by order id
	expiry  byTime             // the stored orders, earliest first
	waiting map[string][]event // payments whose order has not come, by order id
	waits   byTime             // the waiting payments, earliest first
	counts  Counts
	evicted int
	waited  int
	emit    func(Joined)
}

type stored struct {
	brewkit.Event
	paid bool // a payment named it, in the window or not
}

func newTask(emit func(Joined), orders, payments *feed) *task {
	return &task{
		feeds: []*feed{orders, payments}, emit: emit,
		store: map[string]*stored{}, waiting: map[string][]event{},
	}
}

// process takes one record, then expires what stream time has passed.
func (t *task) process(e event) {
	if e.At.After(t.stream) {
		t.stream = e.At
	}
	switch {
	case e.payment == "": // an order
		if _, dup := t.store[e.OrderID]; dup {
			break
		}
		o := &stored{Event: e.Event}
		t.store[e.OrderID] = o
		heap.Push(&t.expiry, e)
		for _, p := range t.waiting[e.OrderID] { // paid before the task read the order
			t.settle(o, p)
			t.waited++
		}
		delete(t.waiting, e.OrderID)
	case t.store[e.OrderID] != nil:
		t.settle(t.store[e.OrderID], e)
	default: // its order may still come: wait for it
		t.waiting[e.OrderID] = append(t.waiting[e.OrderID], e)
		heap.Push(&t.waits, e)
	}
	t.expire(false)
}

// settle decides payment p of order o.
func (t *task) settle(o *stored, p event) {
	o.paid = true
	v := Judge(o.At, p.At)
	t.counts.Count(v)
	if v == Matched {
		t.emit(joined(o.Event, p.Event, p.payment))
	}
}

// expire drops the orders whose retention stream time has passed (unpaid
// ones are counted), and gives up on the payments that waited long enough
// for their order (they name an unknown one); all of them when the input
// has ended.
func (t *task) expire(ended bool) {
	for len(t.expiry) > 0 && (ended || !t.expiry[0].At.Add(Retention).After(t.stream)) {
		e := heap.Pop(&t.expiry).(event)
		o := t.store[e.OrderID]
		delete(t.store, e.OrderID)
		if !o.paid {
			t.counts.Count(Unpaid)
		}
		if !ended {
			t.evicted++
		}
	}
	for len(t.waits) > 0 && (ended || !t.waits[0].At.Add(Wait).After(t.stream)) {
		p := heap.Pop(&t.waits).(event)
		w := t.waiting[p.OrderID]
		i := slices.IndexFunc(w, func(q event) bool { return q.payment == p.payment })
		if i < 0 {
			continue // its order came
		}
		if w = slices.Delete(w, i, i+1); len(w) == 0 {
			delete(t.waiting, p.OrderID)
		} else {
			t.waiting[p.OrderID] = w
		}
		t.counts.Count(UnknownOrder)
	}
}

// finish closes every window: the input has ended.
func (t *task) finish() { t.expire(true) }

// byTime is a heap of events, the earliest first.
type byTime []event

func (h byTime) Len() int           { return len(h) }
func (h byTime) Less(i, j int) bool { return h[i].At.Before(h[j].At) }
func (h byTime) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *byTime) Push(x any)        { *h = append(*h, x.(event)) }
func (h *byTime) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

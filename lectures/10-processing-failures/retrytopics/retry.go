// Package retry is courier-service with non-blocking retries: a booking that
// fails with a retriable error does not hold its partition. The record goes
// to the first retry topic, is tried again from there once the topic's delay
// has passed, then from the second retry topic, and finally lands in the
// dead-letter topic with headers that say why; a poison record goes to the
// dead-letter topic at once.
//
// A retry topic's delay is honoured by pausing that topic's partition until
// its next record is due (kgo's PauseFetchPartitions), never by sleeping in
// the poll loop: the orders topic and the other partitions flow on meanwhile.
//
// The price is per-key order: while an order's record waits in a retry topic,
// a later event of the same order in the orders topic is booked first. With
// Park, the courier keeps the order: while a key has a record in the retry
// path, its later records follow it there, untried, and each is tried only
// once the records of its key ahead of it are booked or dead-lettered.
package retrytopics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/lectures/10-processing-failures/courier"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// The headers a record carries in the retry topics and the dead-letter topic.
const (
	HeaderError        = "error"              // the last failure, without the order id: "503 partner unavailable, try later"
	HeaderKind         = "error.kind"         // retriable or poison
	HeaderAttempts     = "attempts"           // how many times the courier has handled the record
	HeaderTopic        = "original.topic"     // where the record was first read
	HeaderPartition    = "original.partition" //
	HeaderOffset       = "original.offset"    //
	HeaderFirstFailure = "first.failure.at"   // RFC 3339, UTC, milliseconds
	HeaderParked       = "parked.behind"      // with Park: the record of its key it waits behind (topic/partition@offset)
)

// ours are the headers the courier sets; others (the event's type, a
// replay's mark) travel with the record unchanged.
var ours = []string{HeaderError, HeaderKind, HeaderAttempts, HeaderTopic, HeaderPartition, HeaderOffset, HeaderFirstFailure, HeaderParked}

// Stage is one retry topic and how long a record waits there before it is
// tried again.
type Stage struct {
	Topic string
	Delay time.Duration
}

// Topics are the courier's topics: where orders come from, the retry topics
// in the order a record passes them, and the dead-letter topic.
type Topics struct {
	Orders  string
	Retries []Stage
	DLT     string
}

// DefaultDelays are the classroom's delays of the two retry topics, whose
// names keep the production delays (5 s and 1 min): a demo lasts seconds.
var DefaultDelays = []time.Duration{2 * time.Second, 5 * time.Second}

// CourierTopics are courier-service's topics (package courier names them)
// with the two retry topics' delays.
func CourierTopics(delays []time.Duration) Topics {
	return Topics{
		Orders:  courier.Orders,
		Retries: []Stage{{courier.Retry5s, delays[0]}, {courier.Retry1m, delays[1]}},
		DLT:     courier.DLT,
	}
}

// Specs are the topics as the courier creates them: the retry topics with the
// orders' partition count (a key's records share a partition number on all
// of them), the dead-letter topic with one partition (dead letters in the
// order they died) and 30 days' retention, like the orders.
func (t Topics) Specs() []brewkit.Topic {
	orders := brewkit.TopicNamed(t.Orders, 6)
	specs := []brewkit.Topic{orders}
	for _, s := range t.Retries {
		specs = append(specs, brewkit.TopicNamed(s.Topic, orders.Partitions))
	}
	return append(specs, brewkit.Topic{Name: t.DLT, Partitions: 1, RF: 3, Retention: 30 * 24 * time.Hour})
}

// Read are the topics the courier reads: the orders and the retry topics.
func (t Topics) Read() []string {
	names := []string{t.Orders}
	for _, s := range t.Retries {
		names = append(names, s.Topic)
	}
	return names
}

// Origin names a record where it was first read.
type Origin struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

func (o Origin) String() string { return fmt.Sprintf("%s/%d@%d", o.Topic, o.Partition, o.Offset) }

// Courier books the orders of Topics.Orders, with retry topics and a
// dead-letter topic.
type Courier struct {
	Topics Topics
	Group  string
	Booker courier.Booker
	// Park keeps per-key order: a record whose key has a record in the
	// retry path follows it there untried (see the package doc).
	Park bool
	// Accept picks the records this courier handles (nil: all); the others
	// are passed over and committed. The demos share the course topics with
	// other runs and take only their own.
	Accept func(*kgo.Record) bool
	// Expect ends Run once this many records have been booked or
	// dead-lettered (0: run until ctx ends).
	Expect int
	// OnFirst is called once, before the first accepted record is handled
	// (the demos start the partner's faults there).
	OnFirst func()
	// Say gets a progress line every second while records are handled.
	Say func(string)
	// SessionTimeout is the group session's (0: kgo's 45 s): how long the
	// group waits for a member that died without leaving.
	SessionTimeout time.Duration
	// OnAssigned is called when the group assigns the courier partitions.
	OnAssigned func()
}

// StageStats counts what the courier did with the records of one topic.
type StageStats struct {
	Topic    string        `json:"topic"`
	Delay    time.Duration `json:"delay"`
	Read     int           `json:"read"`     // records handled (not those passed over)
	Attempts int           `json:"attempts"` // booking calls
	Booked   int           `json:"booked"`
	Retried  int           `json:"retried"` // failed, sent to the next retry topic
	Parked   int           `json:"parked"`  // sent on untried, behind an earlier record of the key
	Dead     int           `json:"dead"`    // sent to the dead-letter topic
}

// Booking is one booking call the partner answered with a booking, in the
// order the courier made them.
type Booking struct {
	OrderID string    `json:"order_id"`
	Seq     int64     `json:"seq"`     // the event's running number in its batch
	Stage   int       `json:"stage"`   // 0 the orders topic, 1.. the retry topics
	Attempt int       `json:"attempt"` // the courier's handling of the record, from 1
	At      time.Time `json:"at"`
	// Waited is how long after the order's event the booking came.
	Waited   time.Duration `json:"waited"`
	Replayed bool          `json:"replayed,omitempty"`
}

// DeadLetter is a record the courier sent to the dead-letter topic.
type DeadLetter struct {
	Key      string `json:"key"`
	Origin   Origin `json:"origin"`
	Error    string `json:"error"`
	Kind     string `json:"kind"`
	Attempts int    `json:"attempts"`
}

// Stats is what a courier run did.
type Stats struct {
	Stages   []StageStats  `json:"stages"` // the orders topic, then each retry topic
	Bookings []Booking     `json:"bookings"`
	Dead     []DeadLetter  `json:"dead"`
	Resolved int           `json:"resolved"` // records booked or dead-lettered (by origin)
	Passed   int           `json:"passed"`   // records of others, passed over
	Pauses   int           `json:"pauses"`   // times a retry partition was paused until due
	Took     time.Duration `json:"took"`     // from the first record handled to the last resolved
}

// OutOfOrder counts, per key, the bookings that came after a booking of a
// later event of the same key: the events a retry overtook.
func (s Stats) OutOfOrder() map[string]int {
	maxSeq := map[string]int64{}
	out := map[string]int{}
	for _, b := range s.Bookings {
		if m, ok := maxSeq[b.OrderID]; ok && b.Seq < m {
			out[b.OrderID]++
			continue
		}
		maxSeq[b.OrderID] = b.Seq
	}
	return out
}

// Waited returns the median and the longest wait of the bookings, from
// their event to the booking.
func (s Stats) Waited() (median, longest time.Duration) {
	if len(s.Bookings) == 0 {
		return 0, 0
	}
	ws := make([]time.Duration, 0, len(s.Bookings))
	for _, b := range s.Bookings {
		ws = append(ws, b.Waited)
	}
	slices.Sort(ws)
	return ws[len(ws)/2], ws[len(ws)-1]
}

type tp struct {
	topic     string
	partition int32
}

// runner is one Run's state. The poll loop owns it, except while it polls,
// when a rebalance's callbacks may touch done and paused (mu).
type runner struct {
	c      *Courier
	stage  map[string]int // topic -> 0 orders, 1.. retry
	stats  Stats
	parked map[string][]Origin // key -> its records in the retry path, in order

	mu     sync.Mutex
	done   map[tp]kgo.EpochOffset // the next offset to commit per partition
	dirty  map[tp]bool
	paused map[tp]time.Time // retry partitions paused until their next record is due

	pending  []*kgo.Record // forwards of this poll, produced before its commit
	dying    []DeadLetter  // their dead letters, counted once produced
	resolved map[Origin]bool
	first    time.Time
	last     time.Time
}

// Run books until Expect records are booked or dead-lettered, or ctx ends.
// It commits what it has handled (its forwards produced first) after each
// poll, and when it stops.
func (c *Courier) Run(ctx context.Context, cfg brewkit.Config) (Stats, error) {
	r := newRunner(c)
	cl, err := brewkit.NewClient(cfg, r.opts()...)
	if err != nil {
		return r.stats, err
	}
	defer cl.Close()
	defer func() { // what is done is committed, also on Ctrl-C
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 800*time.Millisecond)
		defer cancel()
		r.mu.Lock()
		defer r.mu.Unlock()
		r.commitLocked(cctx, cl) //nolint:errcheck // best effort: the next run reads the rest again
	}()

	var check brewkit.FetchCheck
	lastSay := time.Now()
	for c.Expect == 0 || len(r.resolved) < c.Expect {
		if err := ctx.Err(); err != nil {
			return r.result(), err
		}
		wait := r.resumeDue(cl)
		pctx, cancel := context.WithTimeout(ctx, wait)
		fs, err := check.Poll(pctx, cl, 500)
		cancel()
		if err != nil {
			cl.AllowRebalance()
			return r.result(), err
		}
		r.mu.Lock()
		stopped := false
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if !stopped {
				stopped = r.partition(ctx, cl, p)
			}
		})
		err = r.flush(ctx, cl)
		if err == nil {
			err = r.commitLocked(ctx, cl)
		}
		r.mu.Unlock()
		cl.AllowRebalance()
		if stopped || ctx.Err() != nil {
			return r.result(), ctx.Err()
		}
		if err != nil {
			return r.result(), err
		}
		if c.Say != nil && !r.first.IsZero() && time.Since(lastSay) >= time.Second {
			lastSay = time.Now()
			c.Say(r.progress())
		}
	}
	return r.result(), nil
}

// newRunner is a run of c, its stats with a stage for the orders topic and
// one for each retry topic.
func newRunner(c *Courier) *runner {
	r := &runner{c: c, stage: map[string]int{c.Topics.Orders: 0}, parked: map[string][]Origin{},
		done: map[tp]kgo.EpochOffset{}, dirty: map[tp]bool{}, paused: map[tp]time.Time{}, resolved: map[Origin]bool{}}
	r.stats.Stages = []StageStats{{Topic: c.Topics.Orders}}
	for i, s := range c.Topics.Retries {
		r.stage[s.Topic] = i + 1
		r.stats.Stages = append(r.stats.Stages, StageStats{Topic: s.Topic, Delay: s.Delay})
	}
	return r
}

// opts are the courier's client options: a group member of the orders and
// retry topics that commits itself, and the rebalance callbacks.
func (r *runner) opts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.ConsumerGroup(r.c.Group),
		kgo.ConsumeTopics(r.c.Topics.Read()...),
		kgo.DisableAutoCommit(),
		// SetOffsets (the re-seek of a paused partition) is safe only while
		// no revoke runs: rebalances wait until the poll's records are done.
		kgo.BlockRebalanceOnPoll(),
		// A resumed partition joins the next fetch to its broker once the
		// fetch in flight returns, which waits up to FetchMaxWait when
		// there is nothing new (kgo's default 5 s would stretch every delay).
		kgo.FetchMaxWait(250 * time.Millisecond),
		kgo.OnPartitionsRevoked(r.revoked),
		kgo.OnPartitionsLost(r.lost),
		kgo.OnPartitionsAssigned(r.assigned),
		kgo.KeepRetryableFetchErrors(),
	}
	if r.c.SessionTimeout > 0 {
		opts = append(opts, kgo.SessionTimeout(r.c.SessionTimeout))
	}
	return opts
}

// assigned is a rebalance giving the courier partitions: OnAssigned is told.
func (r *runner) assigned(context.Context, *kgo.Client, map[string][]int32) {
	if r.c.OnAssigned != nil {
		r.c.OnAssigned()
	}
}

func (r *runner) result() Stats {
	s := r.stats
	s.Resolved = len(r.resolved)
	if !r.first.IsZero() {
		s.Took = r.last.Sub(r.first)
	}
	return s
}

func (r *runner) progress() string {
	booked, dead := 0, len(r.stats.Dead)
	for _, s := range r.stats.Stages {
		booked += s.Booked
	}
	line := fmt.Sprintf("%5.1fs  booked %d, dead-lettered %d", time.Since(r.first).Seconds(), booked, dead)
	if r.c.Expect > 0 {
		line += fmt.Sprintf(", waiting %d", r.c.Expect-len(r.resolved))
	}
	return line
}

// resumeDue resumes the paused partitions whose next record is due and
// returns how long the next poll may wait: until the next one is due, at
// most half a second (progress, and Expect checked).
func (r *runner) resumeDue(cl *kgo.Client) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	wait := 500 * time.Millisecond
	for at, due := range r.paused {
		if d := due.Sub(now); d > 0 {
			wait = min(wait, d)
			continue
		}
		cl.ResumeFetchPartitions(map[string][]int32{at.topic: {at.partition}})
		delete(r.paused, at)
	}
	return max(wait, 10*time.Millisecond)
}

// partition handles a partition's records in order. A retry topic's record
// that is not due yet pauses its partition there. It returns true when the
// courier is stopping (ctx ended during a booking).
func (r *runner) partition(ctx context.Context, cl *kgo.Client, p kgo.FetchTopicPartition) bool {
	st, ok := r.stage[p.Topic]
	if !ok {
		return false
	}
	for _, rec := range p.Records {
		if r.c.Accept != nil && !r.c.Accept(rec) {
			r.stats.Passed++
			r.markDone(rec)
			continue
		}
		if st > 0 {
			if due := rec.Timestamp.Add(r.c.Topics.Retries[st-1].Delay); time.Now().Before(due) {
				r.pause(cl, rec, due)
				return false
			}
		}
		if r.first.IsZero() {
			r.first = time.Now()
			if r.c.OnFirst != nil {
				r.c.OnFirst()
			}
		}
		r.stats.Stages[st].Read++
		if r.handle(ctx, st, rec) {
			return true
		}
		r.markDone(rec)
	}
	return false
}

// pause stops fetching rec's partition until due and puts its fetch position
// back to rec.
//
// kgo drops the records it has buffered for a paused partition when the
// next poll takes them, without moving the partition's position, so they are
// fetched again after the resume. The records this poll has already returned
// are past that position: without the re-seek, rec and those after it in
// this poll would be skipped.
func (r *runner) pause(cl *kgo.Client, rec *kgo.Record, due time.Time) {
	at := tp{rec.Topic, rec.Partition}
	r.paused[at] = due
	r.stats.Pauses++
	cl.PauseFetchPartitions(map[string][]int32{rec.Topic: {rec.Partition}})
	cl.SetOffsets(map[string]map[int32]kgo.EpochOffset{rec.Topic: {rec.Partition: {Epoch: rec.LeaderEpoch, Offset: rec.Offset}}})
}

// meta is what the headers say of a record's path so far.
type meta struct {
	origin   Origin
	attempts int
	first    time.Time
}

func metaOf(rec *kgo.Record, stage int) meta {
	m := meta{origin: Origin{rec.Topic, rec.Partition, rec.Offset}}
	if stage == 0 {
		return m
	}
	h := map[string]string{}
	for _, kv := range rec.Headers {
		h[kv.Key] = string(kv.Value)
	}
	p, perr := strconv.ParseInt(h[HeaderPartition], 10, 32)
	o, oerr := strconv.ParseInt(h[HeaderOffset], 10, 64)
	if h[HeaderTopic] != "" && perr == nil && oerr == nil {
		m.origin = Origin{h[HeaderTopic], int32(p), o}
	}
	m.attempts, _ = strconv.Atoi(h[HeaderAttempts])
	m.first, _ = time.Parse(time.RFC3339Nano, h[HeaderFirstFailure])
	return m
}

// handle handles one due record of stage st. It returns true when ctx ended
// during its booking: the record stays uncommitted.
func (r *runner) handle(ctx context.Context, st int, rec *kgo.Record) bool {
	s := &r.stats.Stages[st]
	m := metaOf(rec, st)
	key := string(rec.Key)
	last := st == len(r.c.Topics.Retries)
	ev, err := courier.Decode(rec)
	if err == nil && r.c.Park && !last {
		if q := r.parked[key]; len(q) > 0 && q[0] != m.origin {
			// An earlier record of the key is in the retry path: follow
			// it, untried. (On the last retry topic the records ahead
			// have all been handled: they are earlier in its partition.)
			r.forward(rec, st+1, m, "", "", q[0].String())
			if st == 0 {
				r.parked[key] = append(q, m.origin)
			}
			s.Parked++
			return false
		}
	}
	if err == nil {
		s.Attempts++
		err = r.c.Booker.Book(ctx, rec)
	}
	kind := courier.Classify(ctx, err)
	if kind == courier.Stopped {
		return true
	}
	m.attempts++
	if kind == courier.Done {
		s.Booked++
		now := time.Now()
		r.stats.Bookings = append(r.stats.Bookings, Booking{OrderID: ev.OrderID, Seq: ev.Seq, Stage: st, Attempt: m.attempts,
			At: now, Waited: now.Sub(ev.At), Replayed: header(rec, "replay") != ""})
		r.unpark(key, m.origin)
		r.resolve(m.origin)
		return false
	}
	if m.first.IsZero() {
		m.first = time.Now()
	}
	if kind == courier.Retriable && !last {
		r.forward(rec, st+1, m, ErrorText(err), kind.String(), "")
		if r.c.Park && st == 0 {
			r.parked[key] = append(r.parked[key], m.origin)
		}
		s.Retried++
		return false
	}
	// Poison, or retriable with no retry topic left.
	s.Dead++
	r.unpark(key, m.origin)
	d := DeadLetter{Key: key, Origin: m.origin, Error: ErrorText(err), Kind: kind.String(), Attempts: m.attempts}
	r.pending = append(r.pending, r.record(rec, r.c.Topics.DLT, m, d.Error, d.Kind, ""))
	r.dying = append(r.dying, d)
	return false
}

// forward sends rec on to retry topic stage (1..).
func (r *runner) forward(rec *kgo.Record, stage int, m meta, errText, kind, parked string) {
	r.pending = append(r.pending, r.record(rec, r.c.Topics.Retries[stage-1].Topic, m, errText, kind, parked))
}

// record is rec for topic, its headers telling its path.
func (r *runner) record(rec *kgo.Record, topic string, m meta, errText, kind, parked string) *kgo.Record {
	var hs []kgo.RecordHeader
	for _, h := range rec.Headers {
		if !slices.Contains(ours, h.Key) {
			hs = append(hs, h)
		}
	}
	add := func(k, v string) {
		if v != "" {
			hs = append(hs, kgo.RecordHeader{Key: k, Value: []byte(v)})
		}
	}
	add(HeaderError, errText)
	add(HeaderKind, kind)
	add(HeaderAttempts, strconv.Itoa(m.attempts))
	add(HeaderTopic, m.origin.Topic)
	add(HeaderPartition, strconv.Itoa(int(m.origin.Partition)))
	add(HeaderOffset, strconv.FormatInt(m.origin.Offset, 10))
	if !m.first.IsZero() {
		add(HeaderFirstFailure, m.first.UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	}
	add(HeaderParked, parked)
	return &kgo.Record{Topic: topic, Key: rec.Key, Value: rec.Value, Headers: hs}
}

func header(rec *kgo.Record, key string) string {
	for _, h := range rec.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

func (r *runner) unpark(key string, o Origin) {
	if !r.c.Park {
		return
	}
	q := slices.DeleteFunc(r.parked[key], func(x Origin) bool { return x == o })
	if len(q) == 0 {
		delete(r.parked, key)
		return
	}
	r.parked[key] = q
}

func (r *runner) resolve(o Origin) {
	r.resolved[o] = true
	r.last = time.Now()
}

func (r *runner) markDone(rec *kgo.Record) {
	at := tp{rec.Topic, rec.Partition}
	r.done[at] = kgo.EpochOffset{Epoch: rec.LeaderEpoch, Offset: rec.Offset + 1}
	r.dirty[at] = true
}

// flush produces this poll's forwards and dead letters, in order, before
// their source records are committed.
func (r *runner) flush(ctx context.Context, cl *kgo.Client) error {
	if len(r.pending) == 0 {
		return nil
	}
	if err := cl.ProduceSync(ctx, r.pending...).FirstErr(); err != nil {
		return fmt.Errorf("writing %d records to the retry and dead-letter topics: %w", len(r.pending), err)
	}
	for _, d := range r.dying {
		r.stats.Dead = append(r.stats.Dead, d)
		r.resolve(d.Origin)
	}
	r.pending, r.dying = r.pending[:0], r.dying[:0]
	return nil
}

// commitLocked commits the partitions handled since the last commit.
func (r *runner) commitLocked(ctx context.Context, cl *kgo.Client) error {
	return r.commitOf(ctx, cl, func(tp) bool { return true })
}

func (r *runner) commitOf(ctx context.Context, cl *kgo.Client, which func(tp) bool) error {
	offs := map[string]map[int32]kgo.EpochOffset{}
	for at := range r.dirty {
		if !which(at) {
			continue
		}
		if offs[at.topic] == nil {
			offs[at.topic] = map[int32]kgo.EpochOffset{}
		}
		offs[at.topic][at.partition] = r.done[at]
	}
	if len(offs) == 0 {
		return nil
	}
	var cerr error
	cl.CommitOffsetsSync(ctx, offs, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			cerr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if e := kerr.ErrorForCode(p.ErrorCode); e != nil && cerr == nil {
					cerr = fmt.Errorf("committing %s partition %d: %w", t.Topic, p.Partition, e)
				}
			}
		}
	})
	if cerr != nil {
		return fmt.Errorf("committing group %s: %w", r.c.Group, cerr)
	}
	for at := range r.dirty {
		if which(at) {
			delete(r.dirty, at)
		}
	}
	return nil
}

// revoked commits what is done of the partitions taken away and forgets
// their pauses (a paused partition stays paused in kgo until resumed, also
// when it comes back later).
func (r *runner) revoked(ctx context.Context, cl *kgo.Client, lost map[string][]int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	in := func(at tp) bool { return slices.Contains(lost[at.topic], at.partition) }
	r.commitOf(ctx, cl, in) //nolint:errcheck // the next owner reads the rest again
	r.forget(cl, lost, in)
}

func (r *runner) lost(_ context.Context, cl *kgo.Client, lost map[string][]int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	in := func(at tp) bool { return slices.Contains(lost[at.topic], at.partition) }
	r.forget(cl, lost, in)
}

func (r *runner) forget(cl *kgo.Client, lost map[string][]int32, in func(tp) bool) {
	for at := range r.paused {
		if in(at) {
			delete(r.paused, at)
		}
	}
	for at := range r.dirty {
		if in(at) {
			delete(r.dirty, at)
		}
	}
	cl.ResumeFetchPartitions(lost)
}

// ErrorText is a failure as the error header holds it: what went wrong,
// without the order id, so that dead letters group by it.
func ErrorText(err error) string {
	var pe *courier.PoisonError
	var be *partner.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &pe):
		return pe.Err.Error()
	case errors.As(err, &be) && be.Status != 0:
		return fmt.Sprintf("%d %s", be.Status, be.Msg)
	case errors.As(err, &be):
		var op *net.OpError
		switch {
		case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
			return "no answer within the call's timeout"
		case errors.As(err, &op):
			return "no answer: " + op.Err.Error()
		}
		return "no answer"
	}
	return err.Error()
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// DropGroup deletes a demo's courier group once its courier has left it,
// best effort: the course topics would collect a group per run otherwise.
func DropGroup(ctx context.Context, adm *kadm.Client, group string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	adm.DeleteGroup(ctx, group) //nolint:errcheck // `make reset-lecture` removes what is left
}

// StartAtEnd commits group's offsets at the end of each topic, so that a
// courier of a new group reads only what is written after.
func StartAtEnd(ctx context.Context, adm *kadm.Client, group string, topics ...string) error {
	offs := kadm.Offsets{}
	for _, t := range topics {
		ends, err := brewkit.EndOffsets(ctx, adm, t)
		if err != nil {
			return err
		}
		ends.Each(func(o kadm.ListedOffset) { offs.AddOffset(o.Topic, o.Partition, o.Offset, -1) })
	}
	resp, err := adm.CommitOffsets(ctx, group, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("starting group %s at the end of %v: %w", group, topics, err)
	}
	return nil
}

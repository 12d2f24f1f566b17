package retrytopics

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/10-processing-failures/courier"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Demo is one run of retry-topics: a batch of orders, the partner's faults,
// the courier's delays.
type Demo struct {
	Orders int // events written
	Keys   int // > 0: the events cycle over this many order ids (several events per order)
	Poison int // how many of them are poison
	Delays []time.Duration
	Park   bool
	// The partner's faults, from the first order the courier handles:
	// ErrorRate of the calls answered 503 until Recover (0: it never
	// recovers), every call answered 503 for Outage from OutageAt, and
	// TimeoutAfterBooking of the calls booked and not answered.
	ErrorRate           float64
	OutageAt, Outage    time.Duration
	Recover             time.Duration
	TimeoutAfterBooking float64
	CallTimeout         time.Duration // one booking call's bound
	Seed                uint64
	Limit               time.Duration // the whole run's bound
}

// Defaults: 60 events of 12 orders, 2 of them poison; the partner refuses 30%
// of the calls for 4 s and every call from 1 s to 3 s; the retry topics wait
// 2 s and 5 s. The orders' first attempts meet the error rate, the first
// retry meets the outage, the second retry a healthy partner.
var Defaults = Demo{Orders: 60, Keys: 12, Poison: 2, Delays: DefaultDelays,
	ErrorRate: 0.3, OutageAt: time.Second, Outage: 2 * time.Second, Recover: 4 * time.Second,
	CallTimeout: time.Second, Seed: 1, Limit: 2 * time.Minute}

// Down: the partner never recovers. Every order passes both retry topics
// into the dead-letter topic: what `make dlt-replay` replays after the fix.
var Down = Demo{Orders: 20, Poison: 2, Delays: DefaultDelays, ErrorRate: 1,
	CallTimeout: time.Second, Seed: 1, Limit: 2 * time.Minute}

// PoisonAt is which events of the batch are poison: spread over it.
func (d Demo) PoisonAt() []int {
	var at []int
	for k := range d.Poison {
		at = append(at, (k+1)*d.Orders/(d.Poison+1))
	}
	return at
}

// Result is a run's outcome, the partner's booking log included.
type Result struct {
	Demo   Demo   `json:"demo"`
	Topics Topics `json:"topics"`
	Run    string `json:"run"`
	Group  string `json:"group"`
	Stats  Stats  `json:"stats"`
	// The orders the batch should book: the ids of its events that are not
	// poison, and how many times the partner's log has each booked.
	OrderIDs []string       `json:"order_ids"`
	Times    map[string]int `json:"times"`
	Doubles  []string       `json:"doubles"`
	Lost     []string       `json:"lost"`
	Partner  string         `json:"partner"` // "" for the partner on 127.0.0.1:18080, else what ran
}

// Dead counts the dead letters of the run by kind.
func (r Result) Dead(kind string) int {
	n := 0
	for _, d := range r.Stats.Dead {
		if d.Kind == kind {
			n++
		}
	}
	return n
}

// RunPrefix is how a run's order ids (and so its records' keys) begin.
func RunPrefix(run string) string { return run + "-" }

// NewRun names a run: name-NNNNNN. Its order ids are <run>-NNNN, its group
// brew.courier.<run>.
func NewRun(name string) string { return fmt.Sprintf("%s-%06d", name, rand.IntN(1_000_000)) }

// OwnRecords accepts the records of run only: the course topics are shared
// with other runs and programs.
func OwnRecords(run string) func(*kgo.Record) bool {
	prefix := []byte(RunPrefix(run))
	return func(r *kgo.Record) bool {
		return len(r.Key) >= len(prefix) && string(r.Key[:len(prefix)]) == string(prefix)
	}
}

// Run writes the demo's batch to the orders topic and runs the courier with
// the partner's faults on until every event is booked or dead-lettered. The
// partner is healthy again when it returns.
func Run(ctx context.Context, cfg brewkit.Config, d Demo, pc *partner.Client, say func(string)) (Result, error) {
	res := Result{Demo: d, Topics: CourierTopics(d.Delays), Run: NewRun("retry")}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	if _, err := brewkit.EnsureTopics(ctx, adm, res.Topics.Specs()...); err != nil {
		return res, err
	}
	b := courier.Batch{Topic: res.Topics.Orders, Run: res.Run, Orders: d.Orders, Poison: d.PoisonAt(), Keys: d.Keys, Seed: d.Seed}
	res.Group = b.Group()
	var retries []string
	for _, s := range res.Topics.Retries {
		retries = append(retries, s.Topic)
	}
	if err := StartAtEnd(ctx, adm, res.Group, retries...); err != nil {
		return res, err
	}
	if err := b.Write(ctx, cl); err != nil {
		return res, err
	}
	poison := map[int]bool{}
	for _, i := range b.Poison {
		poison[i] = true
	}
	seen := map[string]bool{}
	for i, id := range b.IDs {
		if !poison[i] && !seen[id] {
			seen[id] = true
			res.OrderIDs = append(res.OrderIDs, id)
		}
	}

	faults := &schedule{pc: pc, d: d}
	defer faults.stop()
	booker := *pc
	booker.Timeout = d.CallTimeout
	c := Courier{Topics: res.Topics, Group: res.Group, Booker: courier.Booker{Partner: &booker, Idempotent: true},
		Park: d.Park, Accept: OwnRecords(res.Run), Expect: d.Orders, OnFirst: faults.start, Say: say}
	lctx, cancel := context.WithTimeout(ctx, d.Limit)
	defer cancel()
	res.Stats, err = c.Run(lctx, cfg)
	DropGroup(ctx, adm, res.Group)
	faults.stop()
	hctx, hcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer hcancel()
	if _, herr := pc.SetFaults(hctx, partner.Faults{}); herr != nil && err == nil {
		err = fmt.Errorf("making the partner healthy again: %w", herr)
	}
	if err != nil && ctx.Err() == nil && lctx.Err() != nil {
		err = fmt.Errorf("%d of %d events still neither booked nor dead-lettered after %s", d.Orders-res.Stats.Resolved, d.Orders, d.Limit)
	}
	if err == nil {
		err = faults.failed()
	}
	if err != nil {
		return res, err
	}
	log, err := pc.Log(ctx)
	if err != nil {
		return res, err
	}
	res.Times = map[string]int{}
	for id, n := range log.Times() {
		if seen[id] {
			res.Times[id] = n
		}
	}
	for _, id := range res.OrderIDs {
		switch n := res.Times[id]; {
		case n == 0:
			res.Lost = append(res.Lost, id)
		case n > 1:
			res.Doubles = append(res.Doubles, id)
		}
	}
	return res, nil
}

// schedule switches the partner's faults as Demo says, from start on.
type schedule struct {
	pc      *partner.Client
	d       Demo
	mu      sync.Mutex
	timers  []*time.Timer
	stopped bool
	err     error
}

// at is the partner's faults from t after the start on.
func (s *schedule) at(t time.Duration) partner.Faults {
	d := s.d
	f := partner.Faults{Seed: d.Seed}
	if d.Recover == 0 || t < d.Recover {
		f.ErrorRate, f.TimeoutAfterBooking = d.ErrorRate, d.TimeoutAfterBooking
	}
	if d.Outage > 0 && t >= d.OutageAt && t < d.OutageAt+d.Outage {
		f.OutageFor = partner.Duration(d.OutageAt + d.Outage - t)
	}
	return f
}

// start sets the first faults, and timers for each change.
func (s *schedule) start() {
	d := s.d
	s.set(s.at(0))
	changes := []time.Duration{d.Recover}
	if d.Outage > 0 {
		changes = append(changes, d.OutageAt, d.OutageAt+d.Outage)
	}
	slices.Sort(changes)
	for _, t := range slices.Compact(changes) {
		if t > 0 {
			s.after(t, func() { s.set(s.at(t)) })
		}
	}
}

func (s *schedule) after(d time.Duration, fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timers = append(s.timers, time.AfterFunc(d, fn))
}

func (s *schedule) set(f partner.Faults) {
	s.mu.Lock() // held through the call: stop waits for a switch under way
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.pc.SetFaults(ctx, f); err != nil && s.err == nil {
		s.err = fmt.Errorf("switching the partner's faults: %w", err)
	}
}

func (s *schedule) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	for _, t := range s.timers {
		t.Stop()
	}
	s.timers = nil
}

func (s *schedule) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Plan says what the run does, before it runs.
func (d Demo) Plan(t Topics, group string) string {
	var b strings.Builder
	events := fmt.Sprintf("%d orders", d.Orders)
	if d.Keys > 0 {
		events = fmt.Sprintf("%d events of %d orders", d.Orders, d.Keys)
	}
	fmt.Fprintf(&b, "%s (%d poison) to %s; the courier's group: %s\n", events, d.Poison, t.Orders, group)
	var stages []string
	for _, s := range t.Retries {
		stages = append(stages, fmt.Sprintf("%s after %s", s.Topic, s.Delay))
	}
	park := "off"
	if d.Park {
		park = "on"
	}
	fmt.Fprintf(&b, "retry topics: %s; then %s; parking %s\n", strings.Join(stages, ", "), t.DLT, park)
	fmt.Fprintf(&b, "the partner: %s\n", d.faultsText())
	return b.String()
}

func (d Demo) faultsText() string {
	var parts []string
	until := "from the first order on"
	if d.Recover > 0 {
		until = fmt.Sprintf("until %s", d.Recover)
	}
	if d.ErrorRate > 0 {
		parts = append(parts, fmt.Sprintf("%.0f%% of the calls answered 503 %s", d.ErrorRate*100, until))
	}
	if d.TimeoutAfterBooking > 0 {
		parts = append(parts, fmt.Sprintf("%.0f%% booked and not answered %s", d.TimeoutAfterBooking*100, until))
	}
	if d.Outage > 0 {
		parts = append(parts, fmt.Sprintf("every call 503 from %s to %s", d.OutageAt, d.OutageAt+d.Outage))
	}
	if len(parts) == 0 {
		return "healthy"
	}
	then := "; then healthy"
	if d.Recover == 0 {
		then = "; it never recovers"
	}
	return strings.Join(parts, ", ") + then
}

// Print writes the result as the README shows it.
func (r Result) Print(w io.Writer) {
	io.WriteString(w, r.Demo.Plan(r.Topics, r.Group)) //nolint:errcheck // printing
	fmt.Fprintln(w)
	t := brewkit.NewTable(w, "TOPIC", "DELAY", "READ", "BOOKED", "RETRIED", "PARKED", "DEAD")
	for i, s := range r.Stats.Stages {
		delay := "-"
		if i > 0 {
			delay = s.Delay.String()
		}
		t.Row(s.Topic, delay, s.Read, s.Booked, s.Retried, s.Parked, s.Dead)
	}
	t.Flush() //nolint:errcheck // printing
	fmt.Fprintln(w)
	once := 0
	for _, n := range r.Times {
		if n == 1 {
			once++
		}
	}
	fmt.Fprintf(w, "the partner's log: %d of %d orders booked once, doubles %d, lost %d (%d calls answered with the booking)\n",
		once, len(r.OrderIDs), len(r.Doubles), len(r.Lost), len(r.Stats.Bookings))
	fmt.Fprintf(w, "dead letters: %d, poison %d, retries exhausted %d\n", len(r.Stats.Dead), r.Dead("poison"), r.Dead("retriable"))
	if r.Demo.Keys > 0 {
		ooo := r.Stats.OutOfOrder()
		total := 0
		for _, n := range ooo {
			total += n
		}
		if total == 0 {
			fmt.Fprintf(w, "order per key: 0 bookings out of order (each order's events booked in their order)\n")
		} else {
			fmt.Fprintf(w, "order per key: %d bookings out of order in %d of %d orders (an earlier event booked after a later one of its order)\n",
				total, len(ooo), len(r.OrderIDs))
		}
	}
	if len(r.Stats.Bookings) == 0 {
		fmt.Fprintf(w, "nothing booked; all done in %.1fs\n", r.Stats.Took.Seconds())
		return
	}
	median, longest := r.Stats.Waited()
	fmt.Fprintf(w, "from event to booking: median %.1fs, longest %.1fs; all done in %.1fs\n", median.Seconds(), longest.Seconds(), r.Stats.Took.Seconds())
}

// Keys returns the keys with bookings out of order, sorted.
func Keys(m map[string]int) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

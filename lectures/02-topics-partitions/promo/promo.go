// Package promo replays Brew's "free coffee on Fridays": orders arrive at a
// fixed rate into a topic while a group of consumers, each spending a fixed
// time per order, works through them. With one partition only one consumer of
// the group gets work; with more partitions the work spreads and keeps up.
package promo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Config sets up the promotion.
type Config struct {
	PerMinute float64       // orders per minute
	Duration  time.Duration // how long orders keep coming
	Consumers int           // consumers in the group
	Work      time.Duration // processing time per order
}

// Defaults is the lecture's Friday: 8,000 orders a minute for 30 s, three
// consumers that each handle 50 orders a second (20 ms an order).
var Defaults = Config{PerMinute: 8000, Duration: 30 * time.Second, Consumers: 3, Work: 20 * time.Millisecond}

// Capacity is how many orders a second one consumer handles.
func (c Config) Capacity() float64 { return float64(time.Second) / float64(c.Work) }

// Consumer is one member of the group.
type Consumer struct {
	ID         int     `json:"id"`
	Partitions []int32 `json:"partitions"`
	Processed  int64   `json:"processed"`
	Rate       float64 `json:"rate"` // orders per second over the last look
}

// Partition is one partition's progress.
type Partition struct {
	ID       int32   `json:"partition"`
	Produced int64   `json:"produced"`
	Done     int64   `json:"processed"`
	Lag      int64   `json:"lag"`
	Rate     float64 `json:"rate"` // orders in per second over the last look
}

// View is one look at a running scenario.
type View struct {
	Partitions int           `json:"partitions"`
	Elapsed    time.Duration `json:"elapsed"`
	Producing  bool          `json:"producing"`
	Parts      []Partition   `json:"parts"`
	Consumers  []Consumer    `json:"consumers"`
}

// Lag sums the partitions' lag.
func (v View) Lag() int64 {
	var n int64
	for _, p := range v.Parts {
		n += p.Lag
	}
	return n
}

// Result is one finished scenario.
type Result struct {
	Partitions int           `json:"partitions"`
	Consumers  []Consumer    `json:"consumers"`
	Produced   int64         `json:"produced"`
	Processed  int64         `json:"processed"`
	Idle       int           `json:"idle"` // consumers the group gave no partition
	MaxLag     int64         `json:"max_lag"`
	Drain      time.Duration `json:"drain"` // from the first order until the last one was processed
}

// Run plays one scenario on a fresh topic with the given partition count,
// calling look about every second, and deletes the topic at the end.
func Run(ctx context.Context, cfg brewkit.Config, c Config, partitions int, look func(View)) (Result, error) {
	res := Result{Partitions: partitions}
	admCl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer admCl.Close()
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: fmt.Sprintf("brew.promo.p%d.", partitions), Partitions: int32(partitions)})
	if err != nil {
		return res, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover demo topic is harmless

	// The group first: production starts once every partition is assigned,
	// so the race measures the work, not the group's join.
	st := newState(partitions, c.Consumers)
	group := topic
	var wg sync.WaitGroup
	cerr := make(chan error, c.Consumers) // a consumer's fetch error ends the run
	var failed error
	cctx, stopConsumers := context.WithCancel(ctx)
	defer func() { stopConsumers(); wg.Wait() }()
	for i := range c.Consumers {
		cl, err := brewkit.NewClient(cfg,
			kgo.ConsumerGroup(group),
			kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			brewkit.ConsumeErrors(),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { st.assign(i, m[topic], true) }),
			kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { st.assign(i, m[topic], false) }),
			kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { st.assign(i, m[topic], false) }),
		)
		if err != nil {
			return res, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			var check brewkit.FetchCheck
			var free time.Time // when the barista is free for the next order
			for cctx.Err() == nil {
				fs, err := check.Poll(cctx, cl, 0)
				if err != nil {
					cerr <- fmt.Errorf("consumer %d: %w", i+1, err)
					return
				}
				fs.EachRecord(func(r *kgo.Record) {
					if cctx.Err() != nil {
						return
					}
					// The barista at work: Work per order, counted from when
					// the last order was done (or from now, after a wait), so
					// a busy machine's late wake-ups do not add up.
					if now := time.Now(); free.Before(now) {
						free = now
					}
					free = free.Add(c.Work)
					time.Sleep(time.Until(free))
					st.done(i, r.Partition, r.Offset)
				})
			}
		}()
	}
	// Every member in, every partition owned: a member joining later would
	// move partitions mid-run and have their records read twice.
	stable := func() bool {
		select {
		case failed = <-cerr:
			return true
		default:
		}
		gs, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return false
		}
		g := gs[group]
		return g.State == "Stable" && len(g.Members) == c.Consumers && st.allAssigned()
	}
	if err := brewkit.WaitFor(ctx, 60*time.Second, 100*time.Millisecond, stable); err != nil {
		return res, fmt.Errorf("the group of %d did not settle on %d partitions: %w", c.Consumers, partitions, err)
	}
	if failed != nil {
		return res, failed
	}

	prod, err := brewkit.NewClient(cfg, kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return res, err
	}
	defer prod.Close()
	start := time.Now()
	var producing atomic.Bool
	producing.Store(true)
	perr := make(chan error, 1)
	go func() {
		perr <- produce(ctx, prod, topic, c, st)
		producing.Store(false)
	}()

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var lastLook View
	for {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case err := <-cerr:
			return res, err
		case <-tick.C:
		}
		v := st.view(partitions, time.Since(start), producing.Load(), lastLook)
		res.MaxLag = max(res.MaxLag, v.Lag())
		if look != nil {
			look(v)
		}
		lastLook = v
		if !producing.Load() && st.drained() {
			break
		}
		if time.Since(start) > c.Duration*20+2*time.Minute {
			return res, fmt.Errorf("the group did not catch up within %s", time.Since(start).Round(time.Second))
		}
	}
	if err := <-perr; err != nil {
		return res, err
	}
	res.Drain = st.lastProcessed().Sub(start)
	final := st.view(partitions, time.Since(start), false, lastLook)
	res.Consumers = final.Consumers
	for _, p := range final.Parts {
		res.Produced += p.Produced
		res.Processed += p.Done
	}
	for _, cs := range res.Consumers {
		if len(cs.Partitions) == 0 {
			res.Idle++
		}
	}
	return res, nil
}

// produce writes keyed orders at c.PerMinute for c.Duration.
func produce(ctx context.Context, cl *kgo.Client, topic string, c Config, st *state) error {
	every := time.Duration(float64(time.Minute) / c.PerMinute)
	rng := rand.New(rand.NewPCG(rand.Uint64(), 2))
	start := time.Now()
	var firstErr error
	var mu sync.Mutex
	for n := int64(1); time.Since(start) < c.Duration; n++ {
		// Pace by the clock, not by sleeps, so slow moments are caught up.
		if wait := time.Duration(n)*every - time.Since(start); wait > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
		}
		cl.Produce(ctx, brewkit.NewOrder(rng, n, time.Now()).Record(topic), func(r *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				return
			}
			st.produced(r.Partition)
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if firstErr != nil {
		return fmt.Errorf("producing to %s: %w", topic, firstErr)
	}
	return nil
}

// state is the counters the producer and consumers update.
type state struct {
	mu       sync.Mutex
	in       []int64 // produced, per partition (the topic is fresh: also its end offset)
	out      []int64 // per partition, the offset after the highest one processed
	perCons  []int64 // processed, per consumer
	owned    []map[int32]bool
	lastDone time.Time
}

func newState(partitions, consumers int) *state {
	s := &state{in: make([]int64, partitions), out: make([]int64, partitions), perCons: make([]int64, consumers)}
	for range consumers {
		s.owned = append(s.owned, map[int32]bool{})
	}
	return s
}

func (s *state) assign(consumer int, ps []int32, add bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range ps {
		if add {
			s.owned[consumer][p] = true
		} else {
			delete(s.owned[consumer], p)
		}
	}
}

func (s *state) allAssigned() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, o := range s.owned {
		n += len(o)
	}
	return n == len(s.in)
}

func (s *state) produced(p int32) { s.mu.Lock(); s.in[p]++; s.mu.Unlock() }

func (s *state) done(consumer int, p int32, offset int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out[p] = max(s.out[p], offset+1)
	s.perCons[consumer]++
	s.lastDone = time.Now()
}

func (s *state) drained() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.in {
		if s.out[p] < s.in[p] {
			return false
		}
	}
	return true
}

func (s *state) lastProcessed() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastDone
}

func (s *state) view(partitions int, elapsed time.Duration, producing bool, prev View) View {
	s.mu.Lock()
	defer s.mu.Unlock()
	secs := (elapsed - prev.Elapsed).Seconds()
	if secs <= 0 {
		secs = 1
	}
	v := View{Partitions: partitions, Elapsed: elapsed, Producing: producing}
	for p := range s.in {
		part := Partition{ID: int32(p), Produced: s.in[p], Done: s.out[p], Lag: s.in[p] - s.out[p]}
		if p < len(prev.Parts) {
			part.Rate = float64(part.Produced-prev.Parts[p].Produced) / secs
		}
		v.Parts = append(v.Parts, part)
	}
	for i, n := range s.perCons {
		c := Consumer{ID: i + 1, Processed: n}
		for p := range s.owned[i] {
			c.Partitions = append(c.Partitions, p)
		}
		slices.Sort(c.Partitions)
		if i < len(prev.Consumers) {
			c.Rate = float64(n-prev.Consumers[i].Processed) / secs
		}
		v.Consumers = append(v.Consumers, c)
	}
	return v
}

// Package promo replays Brew's "free coffee on Fridays": orders arrive at a
// fixed rate into a topic while a group of consumers, each spending a fixed
// time per order, works through them. With one partition only one consumer of
// the group gets work; with more partitions the work spreads and keeps up.
package promo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
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

// Run plays one scenario on a fresh topic with the given partition count,
// calling look about every second, and deletes the topic at the end.
func Run(ctx context.Context, cfg brewkit.Config, c Config, partitions int, look func(View)) (Result, error) {
	admCl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer admCl.Close()
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: fmt.Sprintf("brew.promo.p%d.", partitions), Partitions: int32(partitions)})
	if err != nil {
		return Result{}, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover demo topic is harmless

	// The group first: production starts once every partition is assigned,
	// so the race measures the work, not the group's join.
	st := newState(partitions, c.Consumers)
	group := topic
	cerr := make(chan error, c.Consumers) // a consumer's fetch error ends the run
	cctx, stopConsumers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stopConsumers(); wg.Wait() }()
	for i := range c.Consumers {
		cl, err := brewkit.NewClient(cfg,
			kgo.ConsumerGroup(group),
			kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.KeepRetryableFetchErrors(),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { st.assign(i, m[topic], true) }),
			kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { st.assign(i, m[topic], false) }),
			kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { st.assign(i, m[topic], false) }),
		)
		if err != nil {
			return Result{}, err
		}
		wg.Go(func() {
			defer cl.Close()
			if err := barista(cctx, cl, c.Work, func(r *kgo.Record) { st.done(i, r.Partition, r.Offset) }); err != nil {
				cerr <- fmt.Errorf("consumer %d: %w", i+1, err)
			}
		})
	}
	if err := waitStable(ctx, adm, group, c.Consumers, st, cerr); err != nil {
		return Result{}, err
	}

	prod, err := brewkit.NewClient(cfg, kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return Result{}, err
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
	return st.watch(ctx, c, start, &producing, perr, cerr, look)
}

// barista is one consumer of the group: it polls and spends work on each
// order, until ctx ends (nil) or a fetch fails.
func barista(ctx context.Context, cl *kgo.Client, work time.Duration, done func(*kgo.Record)) error {
	var check brewkit.FetchCheck
	var free time.Time // when the barista is free for the next order
	for ctx.Err() == nil {
		fs, err := check.Poll(ctx, cl, 0)
		if err != nil {
			return err
		}
		fs.EachRecord(func(r *kgo.Record) {
			if ctx.Err() != nil {
				return
			}
			// The barista at work: work per order, counted from when the
			// last order was done (or from now, after a wait), so a busy
			// machine's late wake-ups do not add up.
			if now := time.Now(); free.Before(now) {
				free = now
			}
			free = free.Add(work)
			time.Sleep(time.Until(free))
			done(r)
		})
	}
	return nil
}

// waitStable waits until every member is in and every partition owned: a
// member joining later would move partitions mid-run and have their records
// read twice.
func waitStable(ctx context.Context, adm *kadm.Client, group string, members int, st *state, cerr <-chan error) error {
	var failed error
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
		return g.State == "Stable" && len(g.Members) == members && st.allAssigned()
	}
	if err := brewkit.WaitFor(ctx, 60*time.Second, 100*time.Millisecond, stable); err != nil {
		return fmt.Errorf("the group of %d did not settle on %d partitions: %w", members, len(st.in), err)
	}
	return failed
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

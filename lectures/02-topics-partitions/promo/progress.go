package promo

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// This file is the harness that watches a scenario: the counters the
// producer and the baristas update, a look at them every second, and the
// result. The Kafka calls are in promo.go.

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

// watch looks at the counters every second until every order produced is
// processed, and tallies the result.
func (s *state) watch(ctx context.Context, c Config, start time.Time, producing *atomic.Bool, perr, cerr <-chan error, look func(View)) (Result, error) {
	partitions := len(s.in)
	res := Result{Partitions: partitions}
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
		v := s.view(partitions, time.Since(start), producing.Load(), lastLook)
		res.MaxLag = max(res.MaxLag, v.Lag())
		if look != nil {
			look(v)
		}
		lastLook = v
		if !producing.Load() && s.drained() {
			break
		}
		if time.Since(start) > c.Duration*20+2*time.Minute {
			return res, fmt.Errorf("the group did not catch up within %s", time.Since(start).Round(time.Second))
		}
	}
	if err := <-perr; err != nil {
		return res, err
	}
	res.Drain = s.lastProcessed().Sub(start)
	final := s.view(partitions, time.Since(start), false, lastLook)
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

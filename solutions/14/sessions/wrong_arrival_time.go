// A plausible wrong solution of exercise 14/sessions: it places each order
// at the stream time when it arrived (the newest event time seen so far),
// not at its own event time, the mistake wrong_arrival_time makes in
// 14/dedup. For an order on time the two are the same; a late order lands
// at the end of the shop's newest session instead of in its gap, bridges
// nothing and stretches the wrong session. The grader must fail it.
package sessions

import (
	"slices"
	"time"
)

// Session is one busy spell of one shop.
type Session struct {
	Start  time.Time // the event time of its first order
	End    time.Time // the event time of its last order
	Orders int       // how many orders it has
	Cents  int64     // what they add up to
}

// Sessions keeps each shop's sessions in order of Start, any two of them
// gap or more apart.
type Sessions struct {
	gap    time.Duration
	shops  map[string][]Session
	stream time.Time
}

// New returns sessions that a gap of gap or more of inactivity splits.
func New(gap time.Duration) *Sessions {
	return &Sessions{gap: gap, shops: map[string][]Session{}}
}

// Add finds the shop's sessions the order is less than gap from (a run of
// neighbours: none, one, or the two or more it bridges) and replaces them
// with one session holding them all and the order.
func (s *Sessions) Add(shop string, at time.Time, cents int64) {
	if at.After(s.stream) {
		s.stream = at
	}
	at = s.stream
	ss := s.shops[shop]
	merged := Session{Start: at, End: at, Orders: 1, Cents: cents}
	first, last := len(ss), len(ss) // the run ss[first:last] it joins
	for i, x := range ss {
		if at.Sub(x.End) >= s.gap {
			continue // x is gap or more before the order
		}
		if x.Start.Sub(at) >= s.gap {
			if first == len(ss) {
				first, last = i, i
			}
			break // x and every session after it are gap or more after the order
		}
		if first == len(ss) {
			first = i
		}
		last = i + 1
		if x.Start.Before(merged.Start) {
			merged.Start = x.Start
		}
		if x.End.After(merged.End) {
			merged.End = x.End
		}
		merged.Orders += x.Orders
		merged.Cents += x.Cents
	}
	s.shops[shop] = slices.Replace(ss, first, last, merged)
}

// Result returns each shop's sessions, in order of Start.
func (s *Sessions) Result() map[string][]Session {
	out := make(map[string][]Session, len(s.shops))
	for shop, ss := range s.shops {
		out[shop] = slices.Clone(ss)
	}
	return out
}

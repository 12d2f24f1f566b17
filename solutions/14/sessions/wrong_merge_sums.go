// A plausible wrong solution of exercise 14/sessions: it finds the
// sessions an order bridges and stretches the first over them, but keeps
// only the first's orders and cents, and the bridging order's: the orders
// of the sessions it swallowed are lost. The grader must fail it.
package sessions

import (
	"slices"
	"time"
)

type Session struct {
	Start  time.Time
	End    time.Time
	Orders int
	Cents  int64
}

type Sessions struct {
	gap   time.Duration
	shops map[string][]Session
}

func New(gap time.Duration) *Sessions {
	return &Sessions{gap: gap, shops: map[string][]Session{}}
}

func (s *Sessions) Result() map[string][]Session {
	out := make(map[string][]Session, len(s.shops))
	for shop, ss := range s.shops {
		out[shop] = slices.Clone(ss)
	}
	return out
}

func (s *Sessions) Add(shop string, at time.Time, cents int64) {
	ss := s.shops[shop]
	var joined []int
	for i, x := range ss {
		if at.Sub(x.End) < s.gap && x.Start.Sub(at) < s.gap {
			joined = append(joined, i)
		}
	}
	if len(joined) == 0 {
		i, _ := slices.BinarySearchFunc(ss, at, func(x Session, at time.Time) int { return x.Start.Compare(at) })
		s.shops[shop] = slices.Insert(ss, i, Session{Start: at, End: at, Orders: 1, Cents: cents})
		return
	}
	first, last := joined[0], joined[len(joined)-1]
	x := ss[first]
	if at.Before(x.Start) {
		x.Start = at
	}
	if ss[last].End.After(x.End) {
		x.End = ss[last].End
	}
	if at.After(x.End) {
		x.End = at
	}
	x.Orders++
	x.Cents += cents
	s.shops[shop] = slices.Replace(ss, first, last+1, x)
}

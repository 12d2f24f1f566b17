// A plausible wrong solution of exercise 14/sessions: it assumes orders
// come in event-time order and keeps one open session per shop, closing it
// at the first order Gap or more after its end. A late order that belongs
// to an earlier session, or bridges the gap before the open one, is added
// to the open session, which then reaches back over the gap. The grader
// must fail it.
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
	if len(ss) == 0 || at.Sub(ss[len(ss)-1].End) >= s.gap {
		s.shops[shop] = append(ss, Session{Start: at, End: at, Orders: 1, Cents: cents})
		return
	}
	open := &ss[len(ss)-1]
	if at.Before(open.Start) {
		open.Start = at
	}
	if at.After(open.End) {
		open.End = at
	}
	open.Orders++
	open.Cents += cents
}

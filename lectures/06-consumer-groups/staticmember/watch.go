package staticmember

import (
	"context"
	"fmt"
	"time"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

// This file is the harness that watches a restart: it counts the records the
// two members read, and tells from their events who owns what, the group's
// generation and what member b saw. The Kafka calls are in static.go.

// emit takes a member's event: a processed record is counted, the rest logged.
func (p *pair) emit(e groups.Event) {
	if e.Kind == "processed" {
		p.read.Add(1)
		return
	}
	p.log.Emit(e)
}

// owns is what member name owns after the events so far.
func (p *pair) owns(name string) []int32 { return groups.Owned(p.log.Events(), name) }

// settled: a and b own three partitions each.
func (p *pair) settled() bool { return len(p.owns("a")) == 3 && len(p.owns("b")) == 3 }

// waitShared waits until a and b share the partitions and have read every
// order, and then a second more: a settled group.
func (p *pair) waitShared(ctx context.Context) error {
	if err := p.log.WaitFor(ctx, time.Minute, 100*time.Millisecond, func() bool { return p.settled() && p.read.Load() >= Orders }); err != nil {
		return fmt.Errorf("a and b did not share the partitions: %w", err)
	}
	return p.log.Sleep(ctx, time.Second)
}

// generation is the newest generation either member has seen.
func (p *pair) generation() int32 {
	return max(lastGeneration(p.log.Events(), "a"), lastGeneration(p.log.Events(), "b"))
}

// mark is where the events so far end: since(mark) reads the events after it.
func (p *pair) mark() int { return len(p.log.Events()) }

// waitBack waits until a, restarted, owns its partitions again in a
// generation no older than gen, with news since mark; then it watches
// SessionSettle more, for anything the coordinator would still do.
func (p *pair) waitBack(ctx context.Context, gen int32, mark int) error {
	err := p.log.WaitFor(ctx, time.Minute, 100*time.Millisecond, func() bool {
		ev := p.log.Events()
		return p.settled() && lastGeneration(ev, "a") >= gen && len(ev) > mark
	})
	if err != nil {
		return fmt.Errorf("a did not get partitions back: %w", err)
	}
	return p.log.Sleep(ctx, SessionSettle)
}

// since is what a owns now, the newest generation it has seen, and how many
// assignments and revocations b saw after mark.
func (p *pair) since(mark int) (owns []int32, gen int32, otherMoves int) {
	ev := p.log.Events()
	owns = p.owns("a")
	gen = lastGeneration(ev, "a")
	for _, e := range ev[mark:] {
		if e.Member == "b" {
			otherMoves++
		}
	}
	return owns, gen, otherMoves
}

// lastGeneration is the newest generation member name has seen in ev.
func lastGeneration(ev []groups.Event, name string) int32 {
	var g int32
	for _, e := range ev {
		if e.Member == name && e.Generation > g {
			g = e.Generation
		}
	}
	return g
}

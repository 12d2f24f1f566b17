// Package groups runs consumer group members and reports what happens to
// them: the partitions each is assigned, revoked or loses, and every record
// it processes, each with a timestamp. The lecture's programs are built on it.
package groups

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Protocol is how a group shares its topic's partitions.
type Protocol string

// The three ways a consumer group can run: the classic protocol in its two
// rebalance modes, and the consumer protocol.
const (
	// Eager: the classic protocol with the range assignor: every rebalance
	// revokes every partition from every member, then hands them out again.
	Eager Protocol = "eager"
	// Cooperative: the classic protocol with cooperative-sticky (franz-go's
	// default): only the partitions that move are revoked.
	Cooperative Protocol = "cooperative"
	// Consumer: KIP-848's consumer protocol: the broker's group coordinator
	// assigns partitions and members reconcile incrementally.
	Consumer Protocol = "consumer"
)

// Protocols lists them in the lecture's order.
var Protocols = []Protocol{Eager, Cooperative, Consumer}

// Label names the group protocol and, for the classic one, its rebalance
// mode: "classic eager", "classic cooperative", "consumer".
func (p Protocol) Label() string {
	if p == Consumer {
		return string(p)
	}
	return "classic " + string(p)
}

// ProtocolUsage is the -protocol flag's help.
const ProtocolUsage = "eager or cooperative (the classic protocol's two rebalance modes), or consumer (the KIP-848 protocol)"

// ParseProtocol accepts eager, cooperative and consumer.
func ParseProtocol(s string) (Protocol, error) {
	p := Protocol(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Protocols, p) {
		return p, nil
	}
	return "", fmt.Errorf("unknown protocol %q: use eager, cooperative or consumer", s)
}

// SessionTimeout is how long the coordinator waits for a silent member of a
// classic group before it rebalances without it (the broker's
// group.min.session.timeout.ms is 6 s).
const SessionTimeout = 6 * time.Second

// Opts are the kgo options that pick the protocol.
func (p Protocol) Opts() []kgo.Opt {
	switch p {
	case Eager:
		return []kgo.Opt{kgo.Balancers(kgo.RangeBalancer()), kgo.SessionTimeout(SessionTimeout), kgo.HeartbeatInterval(time.Second)}
	case Consumer:
		// The broker assigns; franz-go asks for its "uniform" (sticky)
		// assignor. Session timeout and heartbeat are the broker's here.
		return []kgo.Opt{kgo.Balancers(kgo.StickyBalancer()), kgo.ServerSideBalancer()}
	}
	return []kgo.Opt{kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.SessionTimeout(SessionTimeout), kgo.HeartbeatInterval(time.Second)}
}

// Event is something that happened to a member.
type Event struct {
	At         time.Time `json:"at"`
	Member     string    `json:"member"`
	Kind       string    `json:"kind"` // assigned, revoked, lost, processed
	Partitions []int32   `json:"partitions,omitempty"`
	Partition  int32     `json:"partition,omitempty"`
	Offset     int64     `json:"offset,omitempty"`
	// Generation is the classic group's generation, or the member epoch
	// under the consumer protocol, when the event happened.
	Generation int32  `json:"generation"`
	MemberID   string `json:"member_id,omitempty"`
}

func (e Event) String() string {
	at := e.At.Format("15:04:05.000")
	switch e.Kind {
	case "processed":
		return fmt.Sprintf("%s  %-8s processed p%d@%d", at, e.Member, e.Partition, e.Offset)
	}
	return fmt.Sprintf("%s  %-8s %-8s %v  (generation %d)", at, e.Member, e.Kind, e.Partitions, e.Generation)
}

// Member is one group member to run.
type Member struct {
	Name       string
	Group      string
	Topic      string
	Protocol   Protocol
	Work       time.Duration // time per record
	InstanceID string        // group.instance.id: a static member
	// OnStart, if set, is called once the member's client is built and the
	// cluster answers, before the member's first poll: where a program says
	// that the member joins, once nothing is left to refuse it.
	OnStart func()
}

// Run consumes as the member until ctx ends, committing what it processed,
// and reports each assignment, revocation, loss and processed record to emit
// (from the client's goroutines: emit must be safe for that). It returns an
// error when the cluster does not answer or a fetch fails for good.
func (m Member) Run(ctx context.Context, cfg brewkit.Config, emit func(Event)) error {
	var cl *kgo.Client
	var mu sync.Mutex
	event := func(kind string, parts map[string][]int32) {
		if len(parts[m.Topic]) == 0 {
			return // kgo also calls with nothing for this member
		}
		mu.Lock()
		c := cl
		mu.Unlock()
		e := Event{At: time.Now(), Member: m.Name, Kind: kind, Partitions: slices.Sorted(slices.Values(parts[m.Topic]))}
		if c != nil {
			e.MemberID, e.Generation = c.GroupMetadata()
		}
		emit(e)
	}
	opts := append(m.Protocol.Opts(),
		kgo.ConsumerGroup(m.Group),
		kgo.ConsumeTopics(m.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitMarks(), // commit only what was processed; also on revoke
		kgo.AutoCommitInterval(500*time.Millisecond),
		// No rebalance while a poll's records are processed: a partition is
		// revoked only between polls, after its records are done and marked.
		kgo.BlockRebalanceOnPoll(),
		kgo.KeepRetryableFetchErrors(),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { event("assigned", p) }),
		kgo.OnPartitionsRevoked(func(ctx context.Context, c *kgo.Client, p map[string][]int32) {
			event("revoked", p)
			c.CommitMarkedOffsets(ctx) //nolint:errcheck // the next owner re-reads what is not committed
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { event("lost", p) }),
	)
	if m.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(m.InstanceID))
	}
	c, err := brewkit.NewClient(cfg, opts...)
	if err != nil {
		return err
	}
	mu.Lock()
	cl = c
	mu.Unlock()
	defer c.Close() // leaves the group (a static member does not)
	if err := brewkit.Ping(ctx, cfg, c); err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it began
		}
		return err
	}
	if m.OnStart != nil {
		m.OnStart()
	}
	var check brewkit.FetchCheck
	for ctx.Err() == nil {
		fs, err := check.Poll(ctx, c, 20) // a bounded batch: a rebalance waits for it
		if err != nil {
			// Let the client leave: with BlockRebalanceOnPoll, Close's
			// LeaveGroup waits for the rebalance this poll still blocks.
			c.AllowRebalance()
			return err
		}
		fs.EachRecord(func(r *kgo.Record) {
			if ctx.Err() != nil {
				return
			}
			time.Sleep(m.Work)
			_, gen := c.GroupMetadata()
			emit(Event{At: time.Now(), Member: m.Name, Kind: "processed", Partition: r.Partition, Offset: r.Offset, Generation: gen})
			c.MarkCommitRecords(r)
		})
		c.AllowRebalance()
	}
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.CommitMarkedOffsets(cctx) //nolint:errcheck // best effort on the way out
	return nil
}

// Owned replays the assignment events of member: the partitions it owns
// after them.
func Owned(events []Event, member string) []int32 {
	var own []int32
	for _, e := range events {
		if e.Member != member {
			continue
		}
		switch e.Kind {
		case "assigned":
			for _, p := range e.Partitions {
				if !slices.Contains(own, p) {
					own = append(own, p)
				}
			}
		case "revoked", "lost":
			own = slices.DeleteFunc(own, func(p int32) bool { return slices.Contains(e.Partitions, p) })
		}
	}
	slices.Sort(own)
	return own
}

// Log collects the events of a group's members, and the error the first of
// them to fail ended with. Its Emit and Fail are safe to hand to several
// members at once, and its WaitFor and Sleep end as soon as one fails: a
// program that waits for its group to settle reports the member's error
// then, instead of waiting on a member that is gone.
type Log struct {
	mu     sync.Mutex
	events []Event
	err    error
	failed chan struct{} // closed by the first Fail
}

// Emit records one event.
func (l *Log) Emit(e Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// Events returns a copy of the events so far.
func (l *Log) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// Fail records that a member ended with err; the first error is kept.
func (l *Log) Fail(err error) {
	if err == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = err
		close(l.failedLocked())
	}
}

// Err returns the first member's error, or nil while none has failed.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

func (l *Log) failedLocked() chan struct{} {
	if l.failed == nil {
		l.failed = make(chan struct{})
	}
	return l.failed
}

// WaitFor is brewkit.WaitFor that gives up as soon as a member fails, with
// that member's error.
func (l *Log) WaitFor(ctx context.Context, limit, every time.Duration, cond func() bool) error {
	err := brewkit.WaitFor(ctx, limit, every, func() bool { return l.Err() != nil || cond() })
	if err == nil {
		err = l.Err()
	}
	return err
}

// Sleep is brewkit.Sleep that ends early, with the member's error, when a
// member fails.
func (l *Log) Sleep(ctx context.Context, d time.Duration) error {
	l.mu.Lock()
	failed := l.failedLocked()
	l.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-failed:
		return l.Err()
	case <-t.C:
		return nil
	}
}

// Go runs m in the background, its events to emit, until stop is called;
// stop ends it and waits until it has left. An error it ends with is
// recorded with Fail, naming the member.
func (l *Log) Go(ctx context.Context, cfg brewkit.Config, m Member, emit func(Event)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := m.Run(ctx, cfg, emit); err != nil {
			l.Fail(fmt.Errorf("member %s: %w", m.Name, err))
		}
	}()
	return func() { cancel(); <-done }
}

package rejoin

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const (
	Partitions = 6
	// Away is how long the member is stopped: well within the session timeout.
	Away           = 2 * time.Second
	SessionTimeout = 20 * time.Second
	// Resume bounds how long your member may take to be back at work
	// after it starts again: a join, not a session timeout.
	Resume = 8 * time.Second
	// Watch is how long the grader watches for a rebalance after the
	// restart: its member hears of one at its next heartbeat (every second).
	Watch = 3 * time.Second
)

const hint = "give the member an identity the coordinator keeps across restarts, the same name each time " +
	"(group.instance.id, kgo.InstanceID): a static member does not leave the group when it stops, " +
	"and back within the session timeout it gets its partitions back (lecture 06: static membership)"

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	topic := env.FreshTopic(t, "ex-rejoin", Partitions)
	group := topic
	t.Cleanup(func() { env.Admin(t).DeleteGroup(context.Background(), group) }) //nolint:errcheck // best effort
	opts := []kgo.Opt{
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(SessionTimeout),
		kgo.HeartbeatInterval(time.Second),
	}
	prod := env.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	rng := rand.New(rand.NewPCG(6, 3))
	written := 0
	write := func() {
		t.Helper()
		var recs []*kgo.Record
		for i := range 5 * Partitions {
			r := brewkit.NewOrder(rng, int64(written+i+1), time.Now()).Record(topic)
			r.Partition = int32(i % Partitions)
			recs = append(recs, r)
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("writing orders: %v", err)
		}
		written += len(recs)
	}
	var s state

	// The grader's member b first, then yours, a.
	runOurs(ctx, t, env.Config, opts, &s)
	s.await(t, time.Minute, "the grader's member to join", nil, func() bool { return len(s.owned()) == Partitions })
	name := fmt.Sprintf("kitchen-%d", rand.IntN(1e6))
	a := runYours(ctx, t, env.Config, name, opts, &s)
	s.await(t, time.Minute, "your member to join (the grader's member to give it half the partitions)", a, func() bool {
		return len(s.owned()) == Partitions/2
	})
	start := s.count()
	write()
	s.await(t, time.Minute, "your member to process the orders of its partitions", a, func() bool {
		return s.count() == written && len(s.yours(start)) == Partitions/2
	})
	before := s.yours(start)
	mark, marked := s.events(), s.count()

	// Yours restarts.
	a.stop(t)
	if err := brewkit.Sleep(ctx, Away); err != nil {
		t.Fatal(err)
	}
	a = runYours(ctx, t, env.Config, name, opts, &s)
	restarted := time.Now()
	write()
	if !s.within(Resume, a, func() bool { return s.count() == written }) {
		if a.ended() {
			grade.Fail(t, "Member runs until ctx ends", "your Member returned (%v) after the restart", a.err())
		}
		grade.Fail(t, hint, "%s after your member started again, %d of the %d orders written since were unprocessed: "+
			"the group was waiting for the member it had before, until its session timed out (%s)",
			time.Since(restarted).Round(100*time.Millisecond), written-s.count(), 5*Partitions, SessionTimeout)
	}
	if err := brewkit.Sleep(ctx, Watch); err != nil {
		t.Fatal(err)
	}
	if moves := s.since(mark); len(moves) > 0 {
		grade.Fail(t, hint, "while your member restarted (%s away), the grader's member saw the group rebalance: %s", Away, strings.Join(moves, ", then "))
	}
	if after := s.yours(marked); !slices.Equal(after, before) {
		grade.Fail(t, hint, "your member read partitions %v before the restart and %v after it", before, after)
	}
	a.stop(t)
}

// state is what both members did.
type state struct {
	mu     sync.Mutex
	own    []int32           // the grader's member's partitions
	moves  []string          // its assignments and revocations
	by     map[string]string // order (partition/offset) -> "ours" or "yours"
	orders []string          // in the order first processed
}

func (s *state) processed(who string, r *kgo.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by == nil {
		s.by = map[string]string{}
	}
	key := fmt.Sprintf("%d/%d", r.Partition, r.Offset)
	if _, ok := s.by[key]; !ok {
		s.orders = append(s.orders, key)
	}
	s.by[key] = who
}

func (s *state) moved(kind string, ps []int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slices.Sort(ps)
	s.moves = append(s.moves, fmt.Sprintf("%s %v", kind, ps))
	if kind == "assigned" {
		s.own = append(s.own, ps...)
	} else {
		s.own = slices.DeleteFunc(s.own, func(p int32) bool { return slices.Contains(ps, p) })
	}
	slices.Sort(s.own)
}

func (s *state) owned() []int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.own)
}

func (s *state) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.orders)
}

func (s *state) events() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.moves)
}

func (s *state) since(mark int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.moves[mark:])
}

// yours lists the partitions of the orders your member processed, among
// those first processed after the first mark.
func (s *state) yours(mark int) []int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ps []int32
	for _, key := range s.orders[mark:] {
		var p, o int32
		fmt.Sscanf(key, "%d/%d", &p, &o)
		if s.by[key] == "yours" && !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return ps
}

// await waits until cond holds; it fails when limit passes first, or when
// m (if not nil) returns meanwhile.
func (s *state) await(t *testing.T, limit time.Duration, what string, m *member, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if m != nil && m.ended() {
			grade.Fail(t, "Member runs until ctx ends: poll in a loop and process what each poll returns",
				"your Member returned (%v) while the grader waited for %s", m.err(), what)
		}
		if time.Now().After(deadline) {
			grade.Fail(t, "poll in a loop and call process for each order the poll returns",
				"%s: not within %s (%d of the orders written processed)", what, limit, s.count())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// within waits up to limit until cond holds or m ends, and reports whether
// cond held.
func (s *state) within(limit time.Duration, m *member, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if m.ended() || time.Now().After(deadline) {
			return cond()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// runOurs runs the grader's member until the test ends: it records its
// assignments and revocations, and the orders it processes.
func runOurs(ctx context.Context, t *testing.T, cfg brewkit.Config, opts []kgo.Opt, s *state) {
	event := func(kind string) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			for _, ps := range m {
				if len(ps) > 0 {
					s.moved(kind, slices.Clone(ps))
				}
			}
		}
	}
	cl, err := brewkit.NewClient(cfg, append(slices.Clone(opts),
		kgo.OnPartitionsAssigned(event("assigned")),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
			event("revoked")(ctx, cl, m)
			cl.CommitUncommittedOffsets(ctx) //nolint:errcheck // at worst your member reads an order again
		}),
		kgo.OnPartitionsLost(event("lost")),
	)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { s.processed("ours", r) })
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		// Close leaves the group, after a rebalance in progress: a member
		// that never came back holds that up to its session timeout.
		closed := make(chan struct{})
		go func() { cl.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
		}
	})
}

// member is one run of your Member, in the background.
type member struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	result error
}

func runYours(ctx context.Context, t *testing.T, cfg brewkit.Config, name string, opts []kgo.Opt, s *state) *member {
	ctx, cancel := context.WithCancel(ctx)
	m := &member{name: name, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		err := Member(ctx, cfg, name, slices.Clone(opts), func(r *kgo.Record) { s.processed("yours", r) })
		m.mu.Lock()
		m.result = err
		m.mu.Unlock()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-m.done:
		case <-time.After(5 * time.Second): // a failed grading does not wait long
		}
	})
	return m
}

func (m *member) ended() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

func (m *member) err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.result
}

// stop ends the member's ctx and waits until Member returns.
func (m *member) stop(t *testing.T) {
	t.Helper()
	m.cancel()
	select {
	case <-m.done:
	case <-time.After(15 * time.Second):
		grade.Fail(t, "return once ctx ends: a poll returns at once then; close the client and return",
			"your Member had not returned 15 s after its ctx ended")
	}
	if err := m.err(); err != nil {
		grade.Fail(t, "when ctx ends the member stops, and that is no error", "your Member returned %v after its ctx ended", err)
	}
}

package handover

import (
	"context"
	"errors"
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
	Work       = 5 * time.Millisecond // per order
)

const (
	hintRevoke = "commit what is processed when partitions are revoked (kgo.OnPartitionsRevoked: a callback of your own replaces kgo's commit on revoke), " +
		"and keep partitions from moving in the middle of a poll (kgo.BlockRebalanceOnPoll, then AllowRebalance) (lecture 06: a member joins)"
	hintStop = "commit what is processed before the member leaves: Close leaves the group and calls OnPartitionsRevoked, " +
		"the last moment to commit (lecture 06: committed offsets)"
)

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	topic := env.FreshTopic(t, "ex-handover", Partitions)
	group := topic
	t.Cleanup(func() { env.Admin(t).DeleteGroup(context.Background(), group) }) //nolint:errcheck // best effort
	orders := &orders{t: t, cl: env.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner())), topic: topic}
	opts := []kgo.Opt{
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(6 * time.Second),
		kgo.HeartbeatInterval(time.Second),
	}
	var seen tally

	// Member a alone reads 60 orders.
	if err := orders.write(ctx, 10); err != nil {
		t.Fatalf("writing orders: %v", err)
	}
	a := run(ctx, t, env.Config, "a", opts, &seen)
	seen.await(t, time.Minute, "a to process the first 60 orders", a, func() bool { return seen.count() >= orders.n() })

	// Member b joins while orders keep coming, until b has orders of
	// half the partitions.
	mark := seen.count()
	b := run(ctx, t, env.Config, "b", opts, &seen)
	stop := orders.trickle(ctx)
	seen.await(t, time.Minute, "b to get half the partitions and process their orders", b, func() bool {
		return len(seen.partitionsOf("b", mark)) >= Partitions/2
	})
	stop()
	seen.await(t, 30*time.Second, "a and b to process every order", nil, func() bool { return seen.count() >= orders.n() })
	if again := seen.twice(); len(again) > 0 {
		grade.Fail(t, hintRevoke, "when member b joined, %d orders were processed twice (%s): b began where the group's commits stood, behind what a had processed",
			len(again), list(again))
	}

	// Member a stops; b takes its partitions over.
	a.stop(t)
	mark = seen.count()
	stop = orders.trickle(ctx)
	seen.await(t, time.Minute, "b to take every partition over once a stopped", b, func() bool {
		return len(seen.partitionsOf("b", mark)) == Partitions
	})
	stop()
	seen.await(t, 30*time.Second, "b to process every order", nil, func() bool { return seen.count() >= orders.n() })
	if again := seen.twice(); len(again) > 0 {
		grade.Fail(t, hintStop, "when member a stopped, %d orders were processed twice (%s): b began where the group's commits stood, behind what a had processed",
			len(again), list(again))
	}
	b.stop(t)
}

// tally is which member processed each order (partition/offset), in order.
type tally struct {
	mu      sync.Mutex
	by      map[string][]string // order -> the members that processed it
	firstAt map[string]int      // order -> how many orders were processed before it first was
	log     []string            // "member order", in processing order
}

func (s *tally) processed(member string, r *kgo.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by == nil {
		s.by, s.firstAt = map[string][]string{}, map[string]int{}
	}
	key := fmt.Sprintf("%d/%d", r.Partition, r.Offset)
	if _, ok := s.by[key]; !ok {
		s.firstAt[key] = len(s.by)
	}
	s.by[key] = append(s.by[key], member)
	s.log = append(s.log, member+" "+key)
}

// count is how many orders were processed, at least once.
func (s *tally) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.by)
}

// partitionsOf lists the partitions of which member processed orders that
// were first processed after the first mark orders.
func (s *tally) partitionsOf(member string, mark int) []int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ps []int32
	for _, e := range s.log {
		name, key, _ := strings.Cut(e, " ")
		var p, o int32
		fmt.Sscanf(key, "%d/%d", &p, &o)
		if name == member && s.firstAt[key] >= mark && !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// twice lists the orders processed more than once, with who processed them.
func (s *tally) twice() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var again []string
	for key, who := range s.by {
		if len(who) > 1 {
			again = append(again, key+" by "+strings.Join(who, ", then "))
		}
	}
	slices.SortFunc(again, func(a, b string) int {
		var pa, oa, pb, ob int
		fmt.Sscanf(a, "%d/%d", &pa, &oa)
		fmt.Sscanf(b, "%d/%d", &pb, &ob)
		if pa != pb {
			return pa - pb
		}
		return oa - ob
	})
	return again
}

// await waits until cond holds; it fails when limit passes first, or when m
// (if not nil) returns meanwhile.
func (s *tally) await(t *testing.T, limit time.Duration, what string, m *member, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if m != nil && m.ended() {
			grade.Fail(t, "Member runs until ctx ends: poll in a loop and process what each poll returns",
				"member %s's Member returned (%v) while the grader waited for %s", m.name, m.err(), what)
		}
		if time.Now().After(deadline) {
			grade.Fail(t, "poll in a loop and call process for each order the poll returns",
				"%s: not within %s (%d orders processed so far)", what, limit, s.count())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// member is one run of Member, in the background.
type member struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	result error
}

func run(ctx context.Context, t *testing.T, cfg brewkit.Config, name string, opts []kgo.Opt, seen *tally) *member {
	ctx, cancel := context.WithCancel(ctx)
	m := &member{name: name, cancel: cancel, done: make(chan struct{})}
	process := func(r *kgo.Record) {
		time.Sleep(Work)
		seen.processed(name, r)
	}
	go func() {
		defer close(m.done)
		err := Member(ctx, cfg, slices.Clone(opts), process)
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
		grade.Fail(t, "return once ctx ends: a poll returns at once then; let the member leave (Close) and return",
			"member %s's Member had not returned 15 s after its ctx ended", m.name)
	}
	if err := m.err(); err != nil {
		grade.Fail(t, "when ctx ends the member stops, and that is no error", "member %s's Member returned %v after its ctx ended", m.name, err)
	}
}

// orders writes orders to every partition alike and remembers how many.
type orders struct {
	t       *testing.T
	cl      *kgo.Client
	topic   string
	mu      sync.Mutex
	written int
	next    int64
	rng     *rand.Rand
}

// write writes perPartition orders to each partition.
func (o *orders) write(ctx context.Context, perPartition int) error {
	var recs []*kgo.Record
	o.mu.Lock()
	if o.rng == nil {
		o.rng = rand.New(rand.NewPCG(6, 2))
	}
	for range perPartition {
		for p := range int32(Partitions) {
			o.next++
			r := brewkit.NewOrder(o.rng, o.next, time.Now()).Record(o.topic)
			r.Partition = p
			recs = append(recs, r)
		}
	}
	o.mu.Unlock()
	if err := o.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return err
	}
	o.mu.Lock()
	o.written += len(recs)
	o.mu.Unlock()
	return nil
}

func (o *orders) n() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.written
}

// trickle writes an order to each partition every 100 ms until stop, which
// fails the test when a write failed.
func (o *orders) trickle(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		for {
			if err := o.write(ctx, 1); err != nil {
				done <- err
				return
			}
			if brewkit.Sleep(ctx, 100*time.Millisecond) != nil {
				done <- nil
				return
			}
		}
	}()
	return func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			o.t.Fatalf("writing orders: %v", err)
		}
	}
}

// list shows the first few entries.
func list(s []string) string {
	if len(s) > 4 {
		return strings.Join(s[:4], "; ") + "; …"
	}
	return strings.Join(s, "; ")
}

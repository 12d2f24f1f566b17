// Package timeline measures what a rebalance costs under each protocol. For
// eager, cooperative-sticky and the consumer protocol in turn it starts two
// member processes on a 6-partition topic while orders flow, adds a third,
// then kills one with SIGKILL, and reads the members' timestamped events: how
// many partitions had no owner in each rebalance and for how long, and how many
// records were processed twice.
package rebalancetimeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

// Config is the run.
type Config struct {
	Member []string      // the command that runs one member printing JSON events; the timeline adds its flags
	Rate   int           // orders per second while the members work
	Settle time.Duration // how long the group works between the steps
	// Together measures the protocols side by side instead of in turn. Only
	// on the simulation: on real Kafka the three runs' members would share
	// the CPU and the brokers whose timing the table shows.
	Together bool
}

// Defaults: 100 orders/s, 3 s between the steps.
var Defaults = Config{Rate: 100, Settle: 3 * time.Second}

// Phase is one rebalance.
type Phase struct {
	Paused  int           `json:"partitions_without_owner"`
	Longest time.Duration `json:"longest_without_owner"`
}

// Row is one protocol's run.
type Row struct {
	Protocol       groups.Protocol `json:"protocol"`
	Join           Phase           `json:"join"`
	Kill           Phase           `json:"kill"`
	Killed         []int32         `json:"killed_members_partitions"`
	Produced       int             `json:"produced"`
	Processed      int             `json:"processed"`
	ProcessedTwice int             `json:"processed_twice"`
	Unprocessed    int             `json:"unprocessed"` // produced, never processed: must be 0
	// Disturbed says why the run does not show the rebalances alone: a
	// member lost its partitions before the end ("" when none did).
	Disturbed string `json:"disturbed,omitempty"`

	// The run as it unfolded, for the picture (Chart): who owned each
	// partition when, and when c joined and b was killed, each measured
	// from the start of the run (members a and b starting).
	Owners    []Span        `json:"owners"`
	JoinAt    time.Duration `json:"join_at"`
	KillAt    time.Duration `json:"kill_at"`
	End       time.Duration `json:"end"`
	Simulated bool          `json:"simulated,omitempty"` // measured on the embedded simulation
}

// Span is one member's ownership of one partition, from when it was assigned
// until it was revoked or lost, or the member died.
type Span struct {
	Partition int32         `json:"partition"`
	Member    string        `json:"member"`
	From      time.Duration `json:"from"`
	To        time.Duration `json:"to"`
}

// Tries is how many times Run measures a protocol whose run a member's
// lost session disturbed.
const Tries = 3

// Run measures each protocol in turn. A run in which a member lost its
// partitions (the group expelled it: its heartbeats came too late, as on a
// machine too busy to answer) shows that, not the rebalance measured; Run
// says so and measures that protocol again, up to Tries times.
func Run(ctx context.Context, cfg brewkit.Config, c Config, protocols []groups.Protocol, say func(string)) ([]Row, error) {
	if !c.Together {
		var rows []Row
		for _, p := range protocols {
			r, err := measure(ctx, cfg, c, p, say)
			if err != nil {
				return rows, err
			}
			rows = append(rows, r)
		}
		return rows, nil
	}
	rows := make([]Row, len(protocols))
	errs := make([]error, len(protocols))
	var wg sync.WaitGroup
	for i, p := range protocols {
		wg.Go(func() { rows[i], errs[i] = measure(ctx, cfg, c, p, say) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return rows, nil
}

// measure measures protocol p, again while a run was disturbed, up to Tries times.
func measure(ctx context.Context, cfg brewkit.Config, c Config, p groups.Protocol, say func(string)) (Row, error) {
	for try := 1; ; try++ {
		r, err := runOne(ctx, cfg, c, p, say)
		if err != nil {
			return r, fmt.Errorf("%s: %w", p, err)
		}
		if r.Disturbed == "" || try == Tries {
			return r, nil
		}
		say(fmt.Sprintf("%s: %s; measuring it again (try %d of %d)", p, r.Disturbed, try+1, Tries))
	}
}

// runOne measures one protocol on a fresh topic while orders flow: members a
// and b join, c joins (the first rebalance), b is killed (the second), and
// the members' events tell what each rebalance cost.
func runOne(ctx context.Context, cfg brewkit.Config, c Config, p groups.Protocol, say func(string)) (Row, error) {
	r := &rebalances{cfg: cfg, c: c, p: p, say: say, row: Row{Protocol: p}}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return r.row, err
	}
	defer cl.Close()
	if r.row.Simulated, err = brewkit.IsSimulated(ctx, cl); err != nil {
		return r.row, err
	}
	var drop func(context.Context) error
	if r.topic, drop, err = brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: fmt.Sprintf("brew.timeline.%s.", p), Partitions: 6}); err != nil {
		return r.row, err
	}
	defer drop(ctx) //nolint:errcheck // leftovers are harmless
	defer r.killMembers()

	// Orders flow the whole time.
	stopProducing := r.produce(ctx, cl)
	defer stopProducing()

	if err := r.firstTwoJoin(ctx); err != nil {
		return r.row, err
	}
	if err := r.thirdJoins(ctx); err != nil {
		return r.row, err
	}
	if err := r.killOne(ctx); err != nil {
		return r.row, err
	}
	stopProducing()
	if err := r.finishBacklog(ctx); err != nil {
		return r.row, err
	}
	r.measure()
	return r.row, nil
}

// rebalances is one protocol's run: the members, their events, and when
// each rebalance began.
type rebalances struct {
	cfg   brewkit.Config
	c     Config
	p     groups.Protocol
	say   func(string)
	topic string // also the group's name
	row   Row

	rec     groups.Log // the members' events; a member's failure ends every wait
	members []*groups.Process
	startAt time.Time            // members a and b started
	joinAt  time.Time            // member c joined
	killAt  time.Time            // member b was killed
	doneAt  time.Time            // every order was processed; a and c are stopped after
	dead    map[string]time.Time // the killed member and when
}

// add starts member name as a process of its own.
func (r *rebalances) add(name string) error {
	m := groups.Member{Name: name, Group: r.topic, Topic: r.topic, Protocol: r.p, Work: 2 * time.Millisecond}
	proc, err := r.rec.StartProcess(r.cfg, r.c.Member, m, r.rec.Emit)
	if err == nil {
		r.members = append(r.members, proc)
	}
	return err
}

// killMembers kills every member still running.
func (r *rebalances) killMembers() {
	for _, m := range r.members {
		m.Stop(syscall.SIGKILL)
	}
}

// owners is each partition's owner now, as the members' events tell.
func (r *rebalances) owners() map[int32]string { return ownersAt(r.rec.Events(), time.Now(), nil) }

// settled reports whether the 6 partitions are shared evenly among names:
// each owns 6/len(names). A rebalance may move partitions in more than one
// step (cooperative revokes first, the consumer protocol's coordinator
// assigns at most once a second), so some owned by each is not yet the end.
func (r *rebalances) settled(names ...string) func() bool {
	return func() bool {
		o := r.owners()
		if len(o) != 6 {
			return false
		}
		for _, n := range names {
			if len(ownedBy(o, n)) != 6/len(names) {
				return false
			}
		}
		return true
	}
}

// errWrite marks the error of a write that failed.
var errWrite = errors.New("writing orders")

// produce writes c.Rate orders a second until the returned stop is called,
// counting those acknowledged; stop waits for the writer to end. A write
// that fails stops it and fails r.rec, which ends every wait.
func (r *rebalances) produce(ctx context.Context, cl *kgo.Client) (stop func()) {
	pctx, cancel := context.WithCancel(ctx)
	var produced sync.WaitGroup
	produced.Go(func() {
		rng := rand.New(rand.NewPCG(rand.Uint64(), 6))
		tick := time.NewTicker(time.Second / time.Duration(r.c.Rate))
		defer tick.Stop()
		for n := int64(1); ; n++ {
			select {
			case <-pctx.Done():
				return
			case <-tick.C:
			}
			// ctx, not pctx: stop must not cancel a write in flight, which
			// the broker may have stored (it would count as processed but
			// never produced).
			err := cl.ProduceSync(ctx, brewkit.NewOrder(rng, n, time.Now()).Record(r.topic)).FirstErr()
			switch {
			case err == nil:
				r.row.Produced++
			case ctx.Err() != nil:
				return
			default:
				// The members would wait for orders that never come.
				r.rec.Fail(fmt.Errorf("%w to %s: %w", errWrite, r.topic, err))
				return
			}
		}
	})
	return func() { cancel(); produced.Wait() }
}

// firstTwoJoin starts members a and b, waits until they share the
// partitions and orders are read, and lets them work for c.Settle. It says
// so once they do: a member or a write that fails at once is then the only
// thing said.
func (r *rebalances) firstTwoJoin(ctx context.Context) error {
	r.startAt = time.Now()
	if err := r.add("a"); err != nil {
		return err
	}
	if err := r.add("b"); err != nil {
		return err
	}
	settled := r.settled("a", "b")
	reading := func() bool { return distinctProcessed(r.rec.Events()) > 0 } // orders are written and read
	if err := r.rec.WaitFor(ctx, time.Minute, 100*time.Millisecond, func() bool { return settled() && reading() }); err != nil {
		return waitError("a and b did not share the partitions", err)
	}
	r.say(fmt.Sprintf("%s: members a and b joined %s and share its partitions", r.p, r.topic))
	return r.rec.Sleep(ctx, r.c.Settle)
}

// thirdJoins is the first rebalance: member c joins, and the group settles
// with partitions for each of the three.
func (r *rebalances) thirdJoins(ctx context.Context) error {
	r.say(fmt.Sprintf("%s: member c joins", r.p))
	r.joinAt = time.Now()
	if err := r.add("c"); err != nil {
		return err
	}
	if err := r.rec.WaitFor(ctx, time.Minute, 100*time.Millisecond, r.settled("a", "b", "c")); err != nil {
		return waitError("c did not get partitions", err)
	}
	return r.rec.Sleep(ctx, r.c.Settle)
}

// killOne is the second rebalance: member b dies with SIGKILL, and its
// partitions wait for new owners.
func (r *rebalances) killOne(ctx context.Context) error {
	r.killAt = time.Now()
	r.row.Killed = ownedBy(r.owners(), "b")
	r.say(fmt.Sprintf("%s: member b (partitions %v) killed with SIGKILL", r.p, r.row.Killed))
	r.members[1].Stop(syscall.SIGKILL)
	r.dead = map[string]time.Time{"b": r.killAt}
	if err := r.rec.WaitFor(ctx, 2*time.Minute, 100*time.Millisecond, func() bool {
		o := ownersAt(r.rec.Events(), time.Now(), r.dead)
		return len(o) == 6
	}); err != nil {
		return waitError("b's partitions found no new owner", err)
	}
	return r.rec.Sleep(ctx, r.c.Settle)
}

// finishBacklog lets a and c process every order produced, then stops them
// cleanly.
func (r *rebalances) finishBacklog(ctx context.Context) error {
	err := r.rec.WaitFor(ctx, time.Minute, 200*time.Millisecond, func() bool {
		return distinctProcessed(r.rec.Events()) >= r.row.Produced
	})
	r.doneAt = time.Now()
	for _, m := range []*groups.Process{r.members[0], r.members[2]} {
		m.Stop(syscall.SIGTERM)
	}
	r.members = nil
	if err != nil {
		return waitError("the group did not process every order", err)
	}
	return nil
}

// measure reads the members' events: the partitions each rebalance left
// without an owner, and the records processed twice or never; and says so.
func (r *rebalances) measure() {
	ev := r.rec.Events()
	r.row.Join = phase(ev, r.joinAt, r.killAt, nil)
	// Both phases, and the picture, end when every order was processed:
	// stopping a and c after that is a rebalance of its own (under the
	// cooperative protocols a's partitions reach c before c stops).
	r.row.Kill = phase(ev, r.killAt, r.doneAt, r.dead)
	r.row.Owners = spans(ev, r.startAt, r.doneAt, r.dead)
	r.row.JoinAt, r.row.KillAt, r.row.End = r.joinAt.Sub(r.startAt), r.killAt.Sub(r.startAt), r.doneAt.Sub(r.startAt)
	seen := map[[2]int64]int{}
	for _, e := range ev {
		if e.Kind == "processed" {
			seen[[2]int64{int64(e.Partition), e.Offset}]++
			r.row.Processed++
		}
	}
	for _, n := range seen {
		if n > 1 {
			r.row.ProcessedTwice += n - 1
		}
	}
	r.row.Unprocessed = r.row.Produced - len(seen)
	r.row.Disturbed = disturbed(ev, r.startAt, r.doneAt)
	r.say(fmt.Sprintf("%s: join paused %d partitions (longest %s), kill paused %d (longest %s), %d records processed twice",
		r.p, r.row.Join.Paused, r.row.Join.Longest.Round(time.Millisecond), r.row.Kill.Paused, r.row.Kill.Longest.Round(time.Millisecond), r.row.ProcessedTwice))
}

// disturbed names the first loss of partitions between start and end: a
// member the group expelled, its session or generation gone. "" if none.
func disturbed(ev []groups.Event, start, end time.Time) string {
	for _, e := range ev {
		if e.Kind == "lost" && e.At.Before(end) {
			return fmt.Sprintf("member %s lost partitions %v at %.1fs (the group expelled it)", e.Member, e.Partitions, e.At.Sub(start).Seconds())
		}
	}
	return ""
}

// waitError is err, a wait's, saying what the group did not do; but a
// failed write is its own reason, the group had none.
func waitError(what string, err error) error {
	if errors.Is(err, errWrite) {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// ownersAt replays the assignment events up to t: each partition's owner. A
// member in dead owns nothing from its death on.
func ownersAt(ev []groups.Event, t time.Time, dead map[string]time.Time) map[int32]string {
	slices.SortStableFunc(ev, func(a, b groups.Event) int { return a.At.Compare(b.At) })
	own := map[int32]string{}
	for _, e := range ev {
		if e.At.After(t) {
			break
		}
		switch e.Kind {
		case "assigned":
			for _, p := range e.Partitions {
				own[p] = e.Member
			}
		case "revoked", "lost":
			for _, p := range e.Partitions {
				if own[p] == e.Member {
					delete(own, p)
				}
			}
		}
	}
	for p, m := range own {
		if at, ok := dead[m]; ok && !t.Before(at) {
			delete(own, p)
		}
	}
	return own
}

// phase measures the partitions without an owner between from and to: from
// a revocation, a loss or the owner's death until the next assignment.
func phase(ev []groups.Event, from, to time.Time, dead map[string]time.Time) Phase {
	slices.SortStableFunc(ev, func(a, b groups.Event) int { return a.At.Compare(b.At) })
	var ph Phase
	paused := map[int32]bool{}
	orphaned := map[int32]time.Time{}
	owner := ownersAt(ev, from, nil)
	for p, m := range owner {
		if at, ok := dead[m]; ok && !at.After(from) {
			orphaned[p] = at
			delete(owner, p)
		}
	}
	for _, e := range ev {
		if !e.At.After(from) || e.At.After(to) {
			continue
		}
		switch e.Kind {
		case "revoked", "lost":
			for _, p := range e.Partitions {
				if owner[p] == e.Member {
					delete(owner, p)
					orphaned[p] = e.At
				}
			}
		case "assigned":
			for _, p := range e.Partitions {
				if since, ok := orphaned[p]; ok {
					paused[p] = true
					ph.Longest = max(ph.Longest, e.At.Sub(since))
					delete(orphaned, p)
				}
				owner[p] = e.Member
			}
		}
	}
	ph.Paused = len(paused)
	return ph
}

// spans replays the assignment events from start to end: each member's
// ownership of each partition, measured from start. An ownership ends when
// its partition is revoked or lost, given to another member, or its owner
// dies (dead); what is still owned at end ends there.
func spans(ev []groups.Event, start, end time.Time, dead map[string]time.Time) []Span {
	slices.SortStableFunc(ev, func(a, b groups.Event) int { return a.At.Compare(b.At) })
	var out []Span
	open := map[int32]Span{}
	closeAt := func(p int32, at time.Time) {
		if s, ok := open[p]; ok {
			s.To = at.Sub(start)
			out = append(out, s)
			delete(open, p)
		}
	}
	// deaths closes, up to t, what the dead members still owned.
	deaths := func(t time.Time) {
		for p, s := range open {
			if at, ok := dead[s.Member]; ok && !t.Before(at) {
				closeAt(p, at)
			}
		}
	}
	for _, e := range ev {
		if e.At.After(end) {
			break
		}
		deaths(e.At)
		switch e.Kind {
		case "assigned":
			for _, p := range e.Partitions {
				if s, ok := open[p]; ok && s.Member == e.Member {
					continue // already its owner
				}
				closeAt(p, e.At)
				open[p] = Span{Partition: p, Member: e.Member, From: e.At.Sub(start)}
			}
		case "revoked", "lost":
			for _, p := range e.Partitions {
				if open[p].Member == e.Member {
					closeAt(p, e.At)
				}
			}
		}
	}
	deaths(end)
	for p := range open {
		closeAt(p, end)
	}
	slices.SortFunc(out, func(a, b Span) int {
		return cmp.Or(cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.From, b.From))
	})
	return out
}

func ownedBy(o map[int32]string, name string) []int32 {
	var out []int32
	for p, m := range o {
		if m == name {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func distinctProcessed(ev []groups.Event) int {
	seen := map[[2]int64]bool{}
	for _, e := range ev {
		if e.Kind == "processed" {
			seen[[2]int64{int64(e.Partition), e.Offset}] = true
		}
	}
	return len(seen)
}

// Print writes the comparison table.
func Print(w io.Writer, rows []Row) {
	t := brewkit.NewTable(w, "PROTOCOL", "JOINED: PAUSED", "LONGEST", "KILLED: PAUSED", "LONGEST", "PROCESSED TWICE")
	for _, r := range rows {
		t.Row(r.Protocol.Label(), r.Join.Paused, r.Join.Longest.Round(10*time.Millisecond), r.Kill.Paused, r.Kill.Longest.Round(10*time.Millisecond), r.ProcessedTwice)
	}
	t.Flush()
}

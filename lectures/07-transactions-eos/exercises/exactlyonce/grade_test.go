package exactlyonce

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/kitchen"
)

// Orders is how many orders the drill's kitchen cooks.
const Orders = 150

// The stages of a batch's life where the grader kills the kitchen.
const (
	// Cooking: in the middle of the batch, cook called for an order and
	// not returned.
	Cooking = "cooking"
	// Offsets: the batch's offsets on the wire (TxnOffsetCommit, or an
	// OffsetCommit outside a transaction), the transaction not ended.
	Offsets = "offsets"
	// Commit: the transaction's commit on the wire (EndTxn): the broker
	// commits it, and the kitchen never hears.
	Commit = "commit"
)

// Quiet is how long a run may take to cook its first order; a run that has
// cooked and then cooks nothing for Idle has run out of orders.
const (
	Quiet = 20 * time.Second
	Idle  = 5 * time.Second
)

const (
	hintDup = "produce the events inside the transaction and commit the batch's offsets inside it too " +
		"(GroupTransactSession.End sends them with the commit): then a crash leaves both or neither (lecture 07: consume-process-produce)"
	hintMissing = "end each batch's transaction with a commit once every event is produced: " +
		"what an aborted or never-ended transaction wrote is invisible to read_committed (lecture 07: consume-process-produce)"
	hintTakeover = "before the first poll, take the transactional id over (kgo's ProducerID sends InitProducerId): it aborts the killed kitchen's open transaction, " +
		"whose offsets the group's offset fetch waits for (KIP-447) until it times out (lecture 07: fencing)"
)

// The child's environment.
const (
	envChild    = "BREW_EX_EXACTLYONCE"
	envIn       = "BREW_EX_IN"
	envOut      = "BREW_EX_OUT"
	envGroup    = "BREW_EX_GROUP"
	envTxnID    = "BREW_EX_TXN_ID"
	envCrash    = "BREW_EX_CRASH" // "stage after": die at stage once after orders cooked in the run
	envInstance = "BREW_EX_INSTANCE"
)

type point struct {
	stage string
	after int
}

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.RealKafka)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	in := env.FreshTopic(t, "ex-exactlyonce-orders", 3)
	out := env.FreshTopic(t, "ex-exactlyonce-kitchen", 3)
	group := in
	adm := env.Admin(t)
	t.Cleanup(func() { adm.DeleteGroup(context.Background(), group) }) //nolint:errcheck // best effort
	rng := rand.New(rand.NewPCG(7, 1))
	recs := make([]*kgo.Record, Orders)
	for i := range recs {
		recs[i] = brewkit.NewOrder(rng, int64(i+1), time.Now()).Record(in)
	}
	if err := env.Client(t).ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("writing the orders: %v", err)
	}
	ends, err := brewkit.EndOffsets(ctx, adm, in)
	if err != nil {
		t.Fatal(err)
	}

	id := strconv.Itoa(rand.IntN(1e6))
	childEnv := []string{
		envChild + "=1", envIn + "=" + in, envOut + "=" + out, envGroup + "=" + group,
		envTxnID + "=kitchen-" + id, envInstance + "=kitchen-" + id,
		brewkit.EnvBootstrap + "=" + env.Config.Bootstrap(),
	}
	var plan []point
	for _, s := range []string{Cooking, Offsets, Commit, Cooking, Offsets, Commit} {
		plan = append(plan, point{s, 1 + rand.IntN(15)})
	}
	rand.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })

	var crashes []string
	prev := ""
	for i, p := range plan {
		c := grade.StartChild(t, "TestChildKitchen", append(childEnv, fmt.Sprintf("%s=%s %d", envCrash, p.stage, p.after))...)
		quietFor(t, c, i+1, prev)
		if !c.Crashed() {
			if c.Done() {
				grade.Fail(t, "Run cooks until ctx ends: poll in a loop and cook each batch", "%s in run %d", c.Failure("Run"), i+1)
			}
			// No such stage came: the orders ran out first, or the
			// kitchen never sends it. The last run tells.
			c.Kill()
			crashes = append(crashes, fmt.Sprintf("%s after %d: not reached", p.stage, p.after))
		} else {
			crashes = append(crashes, fmt.Sprintf("%s after %d", p.stage, p.after))
		}
		prev = p.stage
	}

	// The last run: until the group has committed every order.
	last := grade.StartChild(t, "TestChildKitchen", childEnv...)
	reached := func() bool {
		committed, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return false
		}
		all := true
		ends.Each(func(e kadm.ListedOffset) {
			if o, ok := committed.Lookup(in, e.Partition); !ok || o.At < e.Offset {
				all = false
			}
		})
		return all
	}
	brewkit.WaitFor(ctx, 45*time.Second, 200*time.Millisecond, func() bool { return reached() || last.Done() }) //nolint:errcheck // judged below
	finished := reached()
	if last.Done() && !finished {
		grade.Fail(t, "Run cooks until ctx ends", "%s in the last run, before the group had committed every order", last.Failure("Run"))
	}
	last.Stop(10 * time.Second)

	rep, err := kitchen.Verify(ctx, env.Config, in, out)
	if err != nil {
		t.Fatalf("reading the orders and the kitchen events: %v", err)
	}
	drill := "after the kills (" + strings.Join(crashes, ", ") + ")"
	var orders []string // the orders named in the report's examples
	for _, e := range rep.Examples {
		source, _, _ := strings.Cut(e, ": ")
		orders = append(orders, strings.Replace(source, in+"/", "partition ", 1))
	}
	examples := strings.Join(orders, ", ")
	switch {
	case rep.Duplicated > 0 || rep.Events > 2*rep.Orders:
		grade.Fail(t, hintDup, "%s, read_committed sees %d kitchen events for %d orders: %d orders cooked more than once (e.g. %s)",
			drill, rep.Events, rep.Orders, rep.Duplicated, examples)
	case rep.Missing > 0:
		grade.Fail(t, hintMissing, "%s, %d of %d orders have no committed kitchen events, or only some (e.g. %s)",
			drill, rep.Missing, rep.Orders, examples)
	case !rep.OK():
		grade.Fail(t, "produce cook's records in the order it returns them", "%s, %d orders have their kitchen events out of order (e.g. %s)",
			drill, rep.OutOfOrder, examples)
	case !finished:
		grade.Fail(t, "commit the batch's offsets in its transaction: a restart begins at the group's committed offsets",
			"every order was cooked once, but 45 s into the last run the group's commits had not reached the end of %s", in)
	}
}

// quietFor waits until run n of the kitchen ends, or goes Idle after
// cooking: the orders ran out before its crash point. A run that cooks
// nothing for Quiet fails; after a kill with the offsets on the wire, with
// the take-over hint.
func quietFor(t *testing.T, c *grade.Child, n int, prev string) {
	t.Helper()
	if !c.Wait(Quiet, func(l []string) bool { return cooked(l) > 0 }) && !c.Done() {
		if prev == Offsets {
			grade.Fail(t, hintTakeover, "run %d of Run, started after a kill with the batch's offsets on the wire, cooked nothing in %s", n, Quiet)
		}
		grade.Fail(t, "poll in a loop and call cook for each order the poll returns", "run %d of Run cooked nothing in %s", n, Quiet)
	}
	for !c.Done() {
		seen := len(c.Lines())
		if !c.Wait(Idle, func(l []string) bool { return len(l) > seen }) {
			return
		}
	}
}

func cooked(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "cook ") {
			n++
		}
	}
	return n
}

// TestChildKitchen is the grader's process that runs Run: TestGrade starts
// it. With BREW_EX_CRASH it kills itself with SIGKILL at that stage, once
// that many orders were cooked in this run: at the stages on the wire, in the
// client's hook for the request, so the request leaves and nothing after it
// does. SIGTERM ends Run's ctx.
func TestChildKitchen(t *testing.T) {
	if os.Getenv(envChild) != "1" {
		t.Skip("a process TestGrade starts")
	}
	cfg, err := brewkit.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	var stage string
	var after int64
	if s := os.Getenv(envCrash); s != "" {
		fmt.Sscanf(s, "%s %d", &stage, &after)
	}
	var n atomic.Int64
	armed := func(s string) bool { return stage == s && n.Load() >= after }
	out := os.Getenv(envOut)
	cook := func(order *kgo.Record) []*kgo.Record {
		if n.Add(1) == after && stage == Cooking {
			grade.Say("crash %s", stage)
			brewkit.Crash()
		}
		grade.Say("cook %d/%d", order.Partition, order.Offset)
		e, err := brewkit.DecodeEvent(order)
		if err != nil {
			grade.Say("cook: %v", err)
			return nil
		}
		var recs []*kgo.Record
		for _, ev := range kitchen.Cook(e, kitchen.SourceOf(order), time.Now()) {
			recs = append(recs, ev.Record(out))
		}
		return recs
	}
	onWrite := func(key int16) {
		switch {
		case (key == 28 || key == 8) && armed(Offsets): // TxnOffsetCommit, OffsetCommit
			grade.Say("crash %s", Offsets)
			brewkit.Crash()
		case key == 26 && armed(Commit): // EndTxn
			grade.Say("crash %s", Commit)
			brewkit.Crash()
		}
	}
	group := []kgo.Opt{
		kgo.ConsumerGroup(os.Getenv(envGroup)),
		kgo.ConsumeTopics(os.Getenv(envIn)),
		kgo.InstanceID(os.Getenv(envInstance)), // back at once after a kill
		kgo.SessionTimeout(6 * time.Second),
		kgo.HeartbeatInterval(time.Second),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.WithHooks(writeHook(onWrite)),
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	err = Run(ctx, cfg, group, os.Getenv(envTxnID), cook)
	grade.Say("returned %v", err)
}

// writeHook is called with each request the client writes to a broker.
type writeHook func(key int16)

func (h writeHook) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err == nil {
		h(key)
	}
}

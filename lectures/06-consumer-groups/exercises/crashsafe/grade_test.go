package crashsafe

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

// The drill: Orders orders on three partitions; the consumer is killed twice,
// in the middle of an order after 15-39 orders of its run, and a third run
// reads to the end.
const (
	Orders = 120
	Work   = 5 * time.Millisecond // per order
)

const (
	hintLoss = "commit an offset only after process has returned for every order before it: " +
		"a commit is the group's promise that those orders are done (lecture 06: when to commit)"
	hintRepeat = "commit after each poll's orders are processed (autocommit runs every 5 s and leaves seconds of work uncommitted); " +
		"what a restart repeats is what was processed and not yet committed (lecture 06: when to commit)"
	hintEnd = "commit what you processed: a restart begins at the group's committed offsets, " +
		"and the orders after them are processed again (lecture 06: committed offsets)"
)

// The child's environment.
const (
	envChild    = "BREW_EX_CRASHSAFE"
	envTopic    = "BREW_EX_TOPIC"
	envGroup    = "BREW_EX_GROUP"
	envInstance = "BREW_EX_INSTANCE"
	envCrashAt  = "BREW_EX_CRASH_AT"
)

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.AnyStand)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	topic := env.FreshTopic(t, "ex-crashsafe", 3)
	group := topic
	adm := env.Admin(t)
	t.Cleanup(func() { adm.DeleteGroup(context.Background(), group) }) //nolint:errcheck // best effort
	produce(ctx, t, env.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner())), topic)
	ends, err := brewkit.EndOffsets(ctx, adm, topic)
	if err != nil {
		t.Fatal(err)
	}

	childEnv := []string{
		envChild + "=1", envTopic + "=" + topic, envGroup + "=" + group,
		envInstance + "=notifications-" + strconv.Itoa(rand.IntN(1e6)),
		brewkit.EnvBootstrap + "=" + env.Config.Bootstrap(),
	}
	kills := []int{15 + rand.IntN(25), 15 + rand.IntN(25)}
	var runs []map[string]int // each run: order (partition/offset) -> times processed
	for i, at := range kills {
		c := grade.StartChild(t, "TestChildConsume", append(childEnv, envCrashAt+"="+strconv.Itoa(at))...)
		if !c.Wait(time.Minute, func(l []string) bool { return slices.Contains(l, "crash-point") }) {
			if c.Done() {
				grade.Fail(t, "Consume runs until ctx ends: poll in a loop and process what each poll returns",
					"%s before its order %d (run %d)", c.Failure("Consume"), at, i+1)
			}
			grade.Fail(t, "poll in a loop and call process for each order the poll returns",
				"run %d of Consume processed %d orders in a minute, and the grader waited for %d", i+1, processedIn(c.Lines()), at)
		}
		c.Kill()
		runs = append(runs, processed(c.Lines()))
	}

	// The last run: until the group has committed every order.
	last := grade.StartChild(t, "TestChildConsume", append(childEnv, envCrashAt+"=0")...)
	var committed kadm.OffsetResponses
	reached := func() bool {
		committed, err = adm.FetchOffsets(ctx, group)
		if err != nil {
			return false
		}
		all := true
		ends.Each(func(e kadm.ListedOffset) {
			if o, ok := committed.Lookup(topic, e.Partition); !ok || o.At < e.Offset {
				all = false
			}
		})
		return all
	}
	brewkit.WaitFor(ctx, 30*time.Second, 100*time.Millisecond, func() bool { return reached() || last.Done() }) //nolint:errcheck // judged below
	if last.Done() && !reached() {
		grade.Fail(t, "Consume runs until ctx ends", "%s before the group had committed every order (run 3)", last.Failure("Consume"))
	}
	finished := reached()
	last.Kill()
	runs = append(runs, processed(last.Lines()))

	// Judge: nothing lost, little repeated.
	var lost []string
	ends.Each(func(e kadm.ListedOffset) {
		for o := range e.Offset {
			key := fmt.Sprintf("%d/%d", e.Partition, o)
			if !slices.ContainsFunc(runs, func(r map[string]int) bool { return r[key] > 0 }) {
				lost = append(lost, key)
			}
		}
	})
	if len(lost) > 0 {
		slices.SortFunc(lost, compareKeys)
		grade.Fail(t, hintLoss, "%d of %d orders were never processed after the kills at orders %d and %d (partition/offset: %s): their offsets were committed before process handled them",
			len(lost), Orders, kills[0], kills[1], list(lost))
	}
	for i, r := range runs {
		for key, n := range r {
			if n > 1 {
				grade.Fail(t, "process each order a poll returns once", "run %d of Consume processed order %s %d times", i+1, key, n)
			}
		}
	}
	for i := range kills {
		var again []string
		for key := range runs[i] {
			if slices.ContainsFunc(runs[i+1:], func(r map[string]int) bool { return r[key] > 0 }) {
				again = append(again, key)
			}
		}
		if len(again) > MaxPoll {
			slices.SortFunc(again, compareKeys)
			grade.Fail(t, hintRepeat, "after the kill -9 in order %d, the restart processed again %d orders the killed run had processed (at most MaxPoll = %d, the poll it died in, may be repeated): %s",
				kills[i], len(again), MaxPoll, list(again))
		}
	}
	if !finished {
		var at []string
		ends.Each(func(e kadm.ListedOffset) {
			o, _ := committed.Lookup(topic, e.Partition)
			at = append(at, fmt.Sprintf("partition %d at %d of %d", e.Partition, o.At, e.Offset))
		})
		slices.Sort(at)
		grade.Fail(t, hintEnd, "the last run processed every order, but 30 s later the group's commits stood at %s", strings.Join(at, ", "))
	}
}

// TestChildConsume is the grader's process that runs Consume: TestGrade
// starts it and kills it. It blocks in the process call of order
// BREW_EX_CRASH_AT of its run (0: never), in the middle of that order.
func TestChildConsume(t *testing.T) {
	if os.Getenv(envChild) != "1" {
		t.Skip("a process TestGrade starts")
	}
	cfg, err := brewkit.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	crashAt, _ := strconv.ParseInt(os.Getenv(envCrashAt), 10, 64)
	group := []kgo.Opt{
		kgo.ConsumerGroup(os.Getenv(envGroup)),
		kgo.ConsumeTopics(os.Getenv(envTopic)),
		kgo.InstanceID(os.Getenv(envInstance)), // back at once after a kill
		kgo.SessionTimeout(6 * time.Second),
		kgo.HeartbeatInterval(time.Second),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}
	var n atomic.Int64
	process := func(r *kgo.Record) {
		if n.Add(1) == crashAt {
			grade.Say("crash-point")
			select {} // the grader kills the process now
		}
		time.Sleep(Work)
		grade.Say("processed %d/%d", r.Partition, r.Offset)
	}
	err = Consume(context.Background(), cfg, group, process)
	grade.Say("returned %v", err)
}

// produce writes the orders, spread evenly over the partitions (cl places
// records where they say).
func produce(ctx context.Context, t *testing.T, cl *kgo.Client, topic string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(6, 1))
	recs := make([]*kgo.Record, Orders)
	for i := range recs {
		recs[i] = brewkit.NewOrder(rng, int64(i+1), time.Now()).Record(topic)
		recs[i].Partition = int32(i % 3)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("writing the orders: %v", err)
	}
}

// processed counts each order's "processed" lines.
func processed(lines []string) map[string]int {
	m := map[string]int{}
	for _, l := range lines {
		if key, ok := strings.CutPrefix(l, "processed "); ok {
			m[key]++
		}
	}
	return m
}

func processedIn(lines []string) int {
	n := 0
	for _, c := range processed(lines) {
		n += c
	}
	return n
}

func compareKeys(a, b string) int {
	var pa, oa, pb, ob int
	fmt.Sscanf(a, "%d/%d", &pa, &oa)
	fmt.Sscanf(b, "%d/%d", &pb, &ob)
	if pa != pb {
		return pa - pb
	}
	return oa - ob
}

// list shows the first few keys.
func list(keys []string) string {
	if len(keys) > 8 {
		return strings.Join(keys[:8], " ") + " …"
	}
	return strings.Join(keys, " ")
}

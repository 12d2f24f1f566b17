// Package lostack shows how acks=1 loses a write the broker acknowledged.
// Both followers of a partition hang (paused) while the leader takes a burst
// of writes; with acks=1 the leader acknowledges each at once, alone. Then the
// leader crashes (SIGKILL) and the followers come back: one of them, still in
// the ISR but without the burst, becomes the leader, and the old leader, when
// it returns, truncates its log to the new leader's. The same fault with
// acks=all loses nothing acknowledged: the leader acknowledged nothing the
// followers did not have, and the producer wrote the rest again.
package lostack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/05-acks-durability/lab"
)

// ErrSimulated says why the demo needs real Kafka.
var ErrSimulated = errors.New("this demo needs real Kafka: the simulation stores one copy of each record, so no follower can miss one (make down && make up STAND=native)")

// Records is how many orders go to the leader while its followers hang.
const Records = 50

// Attempt is the fault run with one acks setting.
type Attempt struct {
	Acks       string  `json:"acks"`
	Topic      string  `json:"topic"`
	Leader     int32   `json:"leader"`
	Followers  []int32 `json:"followers"`
	NewLeader  int32   `json:"new_leader"`
	Sent       int     `json:"sent"`
	AckedEarly int     `json:"acked_before_the_crash"`
	Acked      int     `json:"acked"`
	Failed     int     `json:"failed"`
	Read       int     `json:"read"`
	Lost       int     `json:"lost"` // acknowledged, never read back
}

// Result is the fault with acks=1, then with acks=all.
type Result struct {
	One, All Attempt
}

// Run runs the fault twice on real Kafka, through nodes.
func Run(ctx context.Context, cfg brewkit.Config, nodes brewkit.Nodes, say func(string)) (Result, error) {
	var res Result
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	if sim, err := brewkit.IsSimulated(ctx, cl); err != nil {
		return res, err
	} else if sim {
		return res, ErrSimulated
	}
	if res.One, err = attempt(ctx, cfg, adm, nodes, kgo.LeaderAck(), say); err != nil {
		return res, err
	}
	res.All, err = attempt(ctx, cfg, adm, nodes, kgo.AllISRAcks(), say)
	return res, err
}

func attempt(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, nodes brewkit.Nodes, acks kgo.Acks, say func(string)) (Attempt, error) {
	a := Attempt{Acks: "1", Sent: Records}
	opts := []kgo.Opt{kgo.RequiredAcks(acks), kgo.ProducerLinger(0)}
	if acks == kgo.LeaderAck() {
		opts = append(opts, kgo.DisableIdempotentWrite()) // idempotence needs acks=all
	} else {
		a.Acks = "all"
	}
	step := func(format string, args ...any) { say("acks=" + a.Acks + ": " + fmt.Sprintf(format, args...)) }

	topic, err := lab.FreshTopic(ctx, adm, "lost-ack", 1, nil)
	if err != nil {
		return a, err
	}
	defer lab.DeleteTopic(ctx, adm, topic)
	a.Topic = topic
	if a.Leader, a.Followers, err = lab.Replicas(ctx, adm, topic, 0); err != nil {
		return a, err
	}
	prod, err := brewkit.NewClient(cfg, opts...)
	if err != nil {
		return a, err
	}
	defer prod.Close()
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("warm-up")}).FirstErr(); err != nil {
		return a, fmt.Errorf("writing to %s: %w", topic, err)
	}

	// The lesson needs both followers in the ISR when they hang: acks=all then
	// waits for them, and acks=1 does not.
	err = brewkit.WaitFor(ctx, time.Minute, 100*time.Millisecond, func() bool {
		isr, err := lab.ISR(ctx, adm, topic, 0)
		return err == nil && len(isr) == 3
	})
	if err != nil {
		return a, fmt.Errorf("%s-0 never had all three replicas in its ISR: %w", topic, err)
	}

	// 1. Both followers hang; the leader alone takes the burst.
	step("pausing followers %v of partition 0; node %d leads", a.Followers, a.Leader)
	for _, f := range a.Followers {
		if err := nodes.PauseNode(ctx, int(f)); err != nil {
			return a, err
		}
	}
	paused := a.Followers
	defer func() {
		for _, f := range paused {
			nodes.ResumeNode(context.WithoutCancel(ctx), int(f)) //nolint:errcheck // best effort on the way out
		}
	}()
	// A follower's fetch request waits at the leader (replica.fetch.wait.max.ms)
	// and is answered as soon as a record arrives; that answer reaches the
	// paused follower's socket and is applied when it resumes. With acks=1,
	// one fence record, acknowledged, uses up the requests the followers sent
	// before they froze, and the burst after it finds none. (With acks=all
	// the fence would wait for the frozen followers; there it does not matter
	// what they got.)
	if a.Acks == "1" {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("fence")}).FirstErr(); err != nil {
			return a, fmt.Errorf("writing the fence record to %s: %w", topic, err)
		}
		time.Sleep(300 * time.Millisecond) // the leader answers the waiting fetches right after the append
	}
	run := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	var mu sync.Mutex
	acked := map[string]bool{}
	for i := 1; i <= Records; i++ {
		prod.Produce(ctx, &kgo.Record{Topic: topic, Value: lab.Seq(run, i)}, func(r *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				a.Failed++
				return
			}
			acked[string(r.Value)] = true
		})
	}
	time.Sleep(500 * time.Millisecond) // acks=1: the leader answers at once; acks=all: it waits
	mu.Lock()
	a.AckedEarly = len(acked)
	mu.Unlock()
	step("%d of %d orders acknowledged while the followers hang", a.AckedEarly, Records)
	if acks == kgo.AllISRAcks() && a.AckedEarly > 0 {
		// Not the lesson: say what the cluster thought, for whoever reads the log.
		dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		isr, err := lab.ISR(dctx, adm, topic, 0)
		cancel()
		step("unexpected: acknowledged with followers %v paused; ISR now %v (%v)", a.Followers, isr, err)
	}

	// 2. The leader crashes; the followers come back without the burst.
	if err := nodes.StopNode(ctx, int(a.Leader), true); err != nil {
		return a, err
	}
	for _, f := range a.Followers {
		if err := nodes.ResumeNode(ctx, int(f)); err != nil {
			return a, err
		}
	}
	paused = nil
	step("node %d killed, followers resumed; waiting for a new leader", a.Leader)
	err = brewkit.WaitFor(ctx, 60*time.Second, 250*time.Millisecond, func() bool {
		l, _, err := lab.Replicas(ctx, adm, topic, 0)
		a.NewLeader = l
		return err == nil && l >= 0 && l != a.Leader
	})
	if err != nil {
		return a, fmt.Errorf("no new leader for %s-0: %w", topic, err)
	}
	step("node %d leads partition 0; starting node %d again", a.NewLeader, a.Leader)

	// 3. The old leader returns and truncates its log to the new leader's.
	if err := nodes.StartNode(ctx, int(a.Leader)); err != nil {
		return a, err
	}
	err = brewkit.WaitFor(ctx, 2*time.Minute, 250*time.Millisecond, func() bool {
		isr, err := lab.ISR(ctx, adm, topic, 0)
		return err == nil && len(isr) == 3
	})
	if err != nil {
		return a, fmt.Errorf("%s-0 did not get its full ISR back: %w", topic, err)
	}
	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := prod.Flush(fctx); err != nil {
		return a, fmt.Errorf("waiting for the producer: %w", err)
	}

	recs, err := lab.ReadAll(ctx, cfg, adm, topic)
	if err != nil {
		return a, err
	}
	copies := lab.Copies(recs, run)
	a.Read = len(copies)
	mu.Lock()
	a.Acked = len(acked)
	for v := range acked {
		if copies[v] == 0 {
			a.Lost++
		}
	}
	mu.Unlock()
	step("acknowledged %d, read back %d, lost %d", a.Acked, a.Read, a.Lost)
	return a, nil
}

// Print writes both attempts.
func (r Result) Print(w io.Writer) {
	t := brewkit.NewTable(w, "ACKS", "SENT", "ACKED BEFORE THE CRASH", "ACKED", "FAILED", "READ", "LOST")
	for _, a := range []Attempt{r.One, r.All} {
		t.Row(a.Acks, a.Sent, a.AckedEarly, a.Acked, a.Failed, a.Read, a.Lost)
	}
	t.Flush()
}

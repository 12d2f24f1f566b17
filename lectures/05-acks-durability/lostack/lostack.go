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

// deliveryTimeout bounds the burst's records: Kafka's default
// delivery.timeout.ms.
const deliveryTimeout = 2 * time.Minute

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
func Run(ctx context.Context, cfg brewkit.Config, nodes brewkit.NodeControl, say func(string)) (Result, error) {
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

func attempt(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, nodes brewkit.NodeControl, acks kgo.Acks, say func(string)) (Attempt, error) {
	f := newFault(cfg, adm, nodes, acks, say)
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.lost-ack.", Partitions: 1})
	if err != nil {
		return f.a, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover demo topic is harmless
	f.a.Topic = topic
	defer f.cleanUp(ctx)
	if err := f.prepare(ctx); err != nil {
		return f.a, err
	}
	if err := f.hangFollowers(ctx); err != nil {
		return f.a, err
	}
	f.burst(ctx)
	if err := f.crashLeader(ctx); err != nil {
		return f.a, err
	}
	if err := f.restartLeader(ctx); err != nil {
		return f.a, err
	}
	err = f.readBack(ctx)
	return f.a, err
}

// fault is one attempt in progress: the cluster, the producer with its acks
// setting, and what it acknowledged.
type fault struct {
	cfg   brewkit.Config
	adm   *kadm.Client
	nodes brewkit.NodeControl
	acks  kgo.Acks
	say   func(string)
	a     Attempt

	prod   *kgo.Client
	paused []int32 // followers to resume on the way out
	run    string  // marks this attempt's records

	mu       sync.Mutex // guards acked, a.Failed and firstErr, which the producer's callbacks update
	acked    map[string]bool
	firstErr error // why the first record failed, for the narration
}

func newFault(cfg brewkit.Config, adm *kadm.Client, nodes brewkit.NodeControl, acks kgo.Acks, say func(string)) *fault {
	f := &fault{cfg: cfg, adm: adm, nodes: nodes, acks: acks, say: say, a: Attempt{Acks: "1", Sent: Records}, acked: map[string]bool{}}
	if acks != kgo.LeaderAck() {
		f.a.Acks = "all"
	}
	return f
}

// step narrates, prefixed with the acks setting.
func (f *fault) step(format string, args ...any) {
	f.say("acks=" + f.a.Acks + ": " + fmt.Sprintf(format, args...))
}

// fullISR waits until the partition has all three replicas in its ISR.
func (f *fault) fullISR(ctx context.Context, limit, every time.Duration) error {
	return brewkit.WaitFor(ctx, limit, every, func() bool {
		isr, err := lab.ISR(ctx, f.adm, f.a.Topic, 0)
		return err == nil && len(isr) == 3
	})
}

// prepare notes the partition's leader and followers, starts the producer
// with the attempt's acks, writes one record, and waits for both followers
// in the ISR: the lesson needs them there when they hang, since acks=all
// then waits for them, and acks=1 does not.
func (f *fault) prepare(ctx context.Context) error {
	var err error
	if f.a.Leader, f.a.Followers, err = lab.Replicas(ctx, f.adm, f.a.Topic, 0); err != nil {
		return err
	}
	// The burst waits out a crash: the leader is killed, the controller
	// fences it after broker.session.timeout.ms (9 s), and the old leader is
	// started again, which on the docker stand alone takes 10 s. Kafka's own
	// delivery.timeout.ms (2 min) covers that; the course's 30 s bound on
	// every wait does not always. While the killed leader's container is
	// down, the docker stand's published port still takes connections and
	// closes them at once; kgo takes an EOF on a connection's first request
	// for a wrong TLS or SASL setting and fails the records, unless told to
	// retry it (this client has already written the warm-up record).
	opts := []kgo.Opt{
		kgo.RequiredAcks(f.acks), kgo.ProducerLinger(0),
		kgo.RecordDeliveryTimeout(deliveryTimeout), kgo.RetryTimeout(deliveryTimeout),
		kgo.AlwaysRetryEOF(),
	}
	if f.acks == kgo.LeaderAck() {
		opts = append(opts, kgo.DisableIdempotentWrite()) // idempotence needs acks=all
	}
	if f.prod, err = brewkit.NewClient(f.cfg, opts...); err != nil {
		return err
	}
	if err := f.prod.ProduceSync(ctx, &kgo.Record{Topic: f.a.Topic, Value: []byte("warm-up")}).FirstErr(); err != nil {
		return fmt.Errorf("writing to %s: %w", f.a.Topic, err)
	}
	if err := f.fullISR(ctx, time.Minute, 100*time.Millisecond); err != nil {
		return fmt.Errorf("%s-0 never had all three replicas in its ISR: %w", f.a.Topic, err)
	}
	return nil
}

// cleanUp resumes the followers still paused and closes the producer.
func (f *fault) cleanUp(ctx context.Context) {
	for _, n := range f.paused {
		f.nodes.ResumeNode(context.WithoutCancel(ctx), int(n)) //nolint:errcheck // best effort on the way out
	}
	if f.prod != nil {
		f.prod.Close()
	}
}

// hangFollowers is step 1: both followers hang (paused), so that the leader
// alone takes the burst.
func (f *fault) hangFollowers(ctx context.Context) error {
	f.step("pausing followers %v of partition 0; node %d leads", f.a.Followers, f.a.Leader)
	for _, n := range f.a.Followers {
		if err := f.nodes.PauseNode(ctx, int(n)); err != nil {
			return err
		}
	}
	f.paused = f.a.Followers
	// A follower's fetch request waits at the leader (replica.fetch.wait.max.ms)
	// and is answered as soon as a record arrives; that answer reaches the
	// paused follower's socket and is applied when it resumes. With acks=1,
	// one fence record, acknowledged, uses up the requests the followers sent
	// before they froze, and the burst after it finds none. (With acks=all
	// the fence would wait for the frozen followers; there it does not matter
	// what they got.)
	if f.a.Acks == "1" {
		if err := f.prod.ProduceSync(ctx, &kgo.Record{Topic: f.a.Topic, Value: []byte("fence")}).FirstErr(); err != nil {
			return fmt.Errorf("writing the fence record to %s: %w", f.a.Topic, err)
		}
		time.Sleep(300 * time.Millisecond) // the leader answers the waiting fetches right after the append
	}
	return nil
}

// burst writes Records orders to the leader alone and counts what it
// acknowledged while the followers hang: acks=1 answers at once, so it waits
// for every answer (up to 10 s, far less than the followers hang); acks=all
// waits for the followers, so it gives the leader half a second to answer
// none.
func (f *fault) burst(ctx context.Context) {
	f.run = strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	for i := 1; i <= Records; i++ {
		f.prod.Produce(ctx, &kgo.Record{Topic: f.a.Topic, Value: lab.Seq(f.run, i)}, f.countAck)
	}
	answered := func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.acked)+f.a.Failed == Records
	}
	if f.acks == kgo.LeaderAck() {
		_ = brewkit.WaitFor(ctx, 10*time.Second, 20*time.Millisecond, answered) // what is left unanswered is counted as such
	} else {
		time.Sleep(500 * time.Millisecond)
	}
	f.mu.Lock()
	f.a.AckedEarly = len(f.acked)
	f.mu.Unlock()
	f.step("%d of %d orders acknowledged while the followers hang", f.a.AckedEarly, Records)
	if f.acks == kgo.AllISRAcks() && f.a.AckedEarly > 0 {
		// Not the lesson: say what the cluster thought, for whoever reads the log.
		dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		isr, err := lab.ISR(dctx, f.adm, f.a.Topic, 0)
		cancel()
		f.step("unexpected: acknowledged with followers %v paused; ISR now %v (%v)", f.a.Followers, isr, err)
	}
}

// countAck is the producer's callback for the burst.
func (f *fault) countAck(r *kgo.Record, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.a.Failed++
		if f.firstErr == nil {
			f.firstErr = err
		}
		return
	}
	f.acked[string(r.Value)] = true
}

// crashLeader is step 2: the leader crashes (SIGKILL) and the followers come
// back without the burst; one of them becomes the leader.
func (f *fault) crashLeader(ctx context.Context) error {
	if err := f.nodes.StopNode(ctx, int(f.a.Leader), true); err != nil {
		return err
	}
	for _, n := range f.a.Followers {
		if err := f.nodes.ResumeNode(ctx, int(n)); err != nil {
			return err
		}
	}
	f.paused = nil
	f.step("node %d killed, followers resumed; waiting for a new leader", f.a.Leader)
	err := brewkit.WaitFor(ctx, 60*time.Second, 250*time.Millisecond, func() bool {
		l, _, err := lab.Replicas(ctx, f.adm, f.a.Topic, 0)
		f.a.NewLeader = l
		return err == nil && l >= 0 && l != f.a.Leader
	})
	if err != nil {
		return fmt.Errorf("no new leader for %s-0: %w", f.a.Topic, err)
	}
	f.step("node %d leads partition 0; starting node %d again", f.a.NewLeader, f.a.Leader)
	return nil
}

// restartLeader is step 3: the old leader returns and truncates its log to
// the new leader's; then the producer's last retries are answered.
func (f *fault) restartLeader(ctx context.Context) error {
	if err := f.nodes.StartNode(ctx, int(f.a.Leader)); err != nil {
		return err
	}
	if err := f.fullISR(ctx, 2*time.Minute, 250*time.Millisecond); err != nil {
		return fmt.Errorf("%s-0 did not get its full ISR back: %w", f.a.Topic, err)
	}
	fctx, cancel := context.WithTimeout(ctx, deliveryTimeout)
	defer cancel()
	if err := f.prod.Flush(fctx); err != nil {
		return fmt.Errorf("waiting for the producer: %w", err)
	}
	return nil
}

// readBack is step 4: it reads the partition back and counts the
// acknowledged orders that are not there.
func (f *fault) readBack(ctx context.Context) error {
	recs, err := lab.ReadAll(ctx, f.cfg, f.adm, f.a.Topic)
	if err != nil {
		return err
	}
	copies := lab.Copies(recs, f.run)
	f.a.Read = len(copies)
	f.mu.Lock()
	f.a.Acked = len(f.acked)
	for v := range f.acked {
		if copies[v] == 0 {
			f.a.Lost++
		}
	}
	failed, firstErr := f.a.Failed, f.firstErr
	f.mu.Unlock()
	f.step("acknowledged %d, read back %d, lost %d", f.a.Acked, f.a.Read, f.a.Lost)
	if failed > 0 {
		f.step("%d orders failed, the first with: %v", failed, firstErr)
	}
	return nil
}

// Print writes both attempts.
func (r Result) Print(w io.Writer) {
	t := brewkit.NewTable(w, "ACKS", "SENT", "ACKED BEFORE THE CRASH", "ACKED", "FAILED", "READ", "LOST")
	for _, a := range []Attempt{r.One, r.All} {
		t.Row(a.Acks, a.Sent, a.AckedEarly, a.Acked, a.Failed, a.Read, a.Lost)
	}
	t.Flush()
}

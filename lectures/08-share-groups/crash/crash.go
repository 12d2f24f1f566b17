// Package crash shows what happens to tickets a barista holds when its
// tablet dies. A consumer process takes some tickets and holds them without
// acknowledging; then it is either killed (SIGKILL: the process and its
// connections are gone) or frozen (SIGSTOP: a hung tablet, its connection
// still open). A second barista gets the held tickets again with delivery
// count 2: at once after the kill, when the broker sees the connection close,
// and for the frozen one when the acquisition lock runs out. That lock starts
// when the broker hands the tickets out, not when the barista freezes: the
// tickets come back one lock after they were taken, however long the barista
// worked before it hung.
package crash

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/08-share-groups/groupconfigs"
	"github.com/brew-course/kafka/lectures/08-share-groups/queue"
)

// How is how the first barista dies.
type How string

// The two ways.
const (
	Kill   How = "kill"   // SIGKILL
	Freeze How = "freeze" // SIGSTOP
)

// Config is one run.
type Config struct {
	Holder  []string      // the command that runs the holding barista (Hold)
	Tickets int           // on the topic
	Take    int           // how many the first barista takes and holds
	Lock    time.Duration // the group's share.record.lock.duration.ms
}

// Defaults: 10 tickets, the first barista holds 5, a 15 s lock (Kafka's
// smallest allowed group setting by default).
var Defaults = Config{Tickets: 10, Take: 5, Lock: 15 * time.Second}

// Held is one ticket the first barista held.
type Held struct {
	Ticket int   `json:"ticket"`
	Count  int32 `json:"delivery_count"`
}

// Run is one crash: the held tickets and when they came back.
type Run struct {
	How    How           `json:"how"`
	Topic  string        `json:"topic"`
	Held   []int         `json:"held"`             // tickets the first barista held (delivery 1)
	Back   []int         `json:"back"`             // the same tickets delivered again to the second
	Counts []int32       `json:"counts"`           // their delivery counts on the second delivery
	After  time.Duration `json:"back_after"`       // from the death to the last of them back
	Taken  time.Duration `json:"back_after_taken"` // from barista-1 getting them to the last of them back
	Others int           `json:"others"`           // the other tickets, delivered once to the second
}

// Demo runs a crash of each kind.
func Demo(ctx context.Context, cfg brewkit.Config, c Config, hows []How, say func(string)) ([]Run, error) {
	var out []Run
	for _, h := range hows {
		r, err := one(ctx, cfg, c, h, say)
		for try := 2; errors.Is(err, errLostWhileAlive) && try <= 3; try++ {
			say(fmt.Sprintf("%s: %v: the crash did not happen; again (try %d of 3)", h, err, try))
			r, err = one(ctx, cfg, c, h, say)
		}
		if err != nil {
			return out, fmt.Errorf("%s: %w", h, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// one is one crash: tickets on a fresh topic, barista-1 takes and holds
// some, barista-2 takes the others, barista-1 dies, and barista-2 gets the
// held ones back.
func one(ctx context.Context, cfg brewkit.Config, c Config, how How, say func(string)) (Run, error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return Run{How: how}, err
	}
	defer cl.Close()
	cr := &crash{run: Run{How: how}, cfg: cfg, c: c, say: say, got: map[int]int32{}}
	drop, err := cr.prepare(ctx, cl, adm)
	if err != nil {
		return cr.run, err
	}
	defer drop()
	stopHolder, err := cr.holdTickets(ctx)
	if err != nil {
		return cr.run, err
	}
	defer stopHolder()
	// A failing barista-2 ends the waits for it, with its error as the cause.
	wctx, failed := context.WithCancelCause(ctx)
	defer failed(nil)
	stopSecond, errc := cr.serveTheRest(ctx, failed)
	defer stopSecond()
	if err := cr.waitForTheFree(wctx); err != nil {
		return cr.run, causeOr(wctx, err)
	}
	if err := cr.die(); err != nil {
		return cr.run, err
	}
	if err := cr.waitForTheHeld(wctx); err != nil {
		return cr.run, causeOr(wctx, err)
	}
	stopSecond()
	if err := <-errc; err != nil {
		return cr.run, err
	}
	return cr.result(), nil
}

// causeOr is what ended ctx, when it ended (barista-2's error, or the
// program's own cancellation), else err.
func causeOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// crash is one crash in progress.
type crash struct {
	run Run
	cfg brewkit.Config
	c   Config
	say func(string)

	holder *exec.Cmd // barista-1's process
	taken  time.Time // when barista-1's first ticket reached us: the broker acquired them just before
	died   time.Time

	mu       sync.Mutex
	got      map[int]int32 // barista-2's tickets and their delivery counts
	lastBack time.Time     // when the last held ticket reached barista-2
}

// prepare makes a fresh topic of tickets and its share group with the
// crash's lock; drop removes both.
func (cr *crash) prepare(ctx context.Context, cl *kgo.Client, adm *kadm.Client) (drop func(), err error) {
	cr.run.Topic = fmt.Sprintf("brew.tickets.crash.%s.%d", cr.run.How, rand.Uint32()%1e6)
	group := cr.run.Topic
	if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.Topic{Name: cr.run.Topic, Partitions: 1, RF: 3, Retention: time.Hour}); err != nil {
		return nil, err
	}
	drop = func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		adm.DeleteTopics(dctx, cr.run.Topic) //nolint:errcheck // leftovers are harmless
		adm.DeleteGroup(dctx, group)         //nolint:errcheck // and so is the group
	}
	if err := groupconfigs.Set(ctx, cl, group, map[string]string{
		"share.auto.offset.reset":       "earliest",
		"share.record.lock.duration.ms": strconv.FormatInt(cr.c.Lock.Milliseconds(), 10),
	}); err != nil {
		drop()
		return nil, err
	}
	if err := queue.Tickets(ctx, cl, cr.run.Topic, cr.c.Tickets); err != nil {
		drop()
		return nil, err
	}
	return drop, nil
}

// holdTickets starts barista-1, a process of its own, and reads the tickets
// it took and holds; stop ends the process, frozen or not.
func (cr *crash) holdTickets(ctx context.Context) (stop func(), err error) {
	cmd := brewkit.Command(ctx, cr.cfg, cr.c.Holder, "-group", cr.run.Topic, "-topic", cr.run.Topic, "-take", strconv.Itoa(cr.c.Take))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr // its one line, when it fails, becomes this error
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the first barista: %w", err)
	}
	cr.holder = cmd
	stop = func() {
		cmd.Process.Signal(syscall.SIGCONT) //nolint:errcheck // a frozen one must wake to die
		cmd.Process.Kill()                  //nolint:errcheck // gone already is fine
		cmd.Wait()                          //nolint:errcheck // killed on purpose
	}
	dec := json.NewDecoder(bufio.NewReader(out))
	for {
		var h Held
		if err := dec.Decode(&h); err != nil {
			// It ended (or wrote what is not a ticket): its own words say why.
			cmd.Process.Kill() //nolint:errcheck // gone already is the usual case
			return nil, fmt.Errorf("the first barista ended before it held tickets: %w", processError(cmd.Wait(), stderr.Bytes()))
		}
		if h.Ticket == 0 {
			break
		}
		if cr.taken.IsZero() {
			cr.taken = time.Now()
		}
		if h.Count != 1 {
			stop()
			return nil, fmt.Errorf("ticket %d reached the first barista with delivery count %d", h.Ticket, h.Count)
		}
		cr.run.Held = append(cr.run.Held, h.Ticket)
	}
	slices.Sort(cr.run.Held)
	cr.say(fmt.Sprintf("%s: barista-1 (pid %d) took tickets %v and holds them", cr.run.How, cmd.Process.Pid, cr.run.Held))
	return stop, nil
}

// processError is the error of the holder process that ended with waitErr
// after writing stderr. Run by brewkit.Main, it writes one line as it fails,
// naming itself: that line is the error. Anything else it wrote (a panic's
// trace) goes on to this program's stderr, and the error is the exit status.
func processError(waitErr error, stderr []byte) error {
	if msg := strings.TrimSpace(string(stderr)); msg != "" && !strings.Contains(msg, "\n") {
		return errors.New(msg)
	}
	os.Stderr.Write(stderr) //nolint:errcheck // best effort
	if waitErr == nil {
		return errors.New("it ended by itself")
	}
	return waitErr
}

// serveTheRest starts barista-2, which takes whatever is free; stop ends it
// and errc then gives its error. An error also goes to failed at once.
func (cr *crash) serveTheRest(ctx context.Context, failed context.CancelCauseFunc) (stop func(), errc chan error) {
	cctx, stop := context.WithCancel(ctx)
	errc = make(chan error, 1)
	go func() {
		err := take(cctx, cr.cfg, cr.run.Topic, cr.run.Topic, func(r *kgo.Record) {
			cr.mu.Lock()
			defer cr.mu.Unlock()
			n := queue.Ticket(r)
			cr.got[n] = r.DeliveryCount()
			if slices.Contains(cr.run.Held, n) {
				cr.lastBack = time.Now()
			}
		})
		if err != nil {
			err = fmt.Errorf("barista-2: %w", err)
			failed(err)
		}
		errc <- err
	}()
	return stop, errc
}

// waitForTheFree waits until barista-2 has every ticket barista-1 does not
// hold, and no held one.
func (cr *crash) waitForTheFree(ctx context.Context) error {
	others := func() int {
		cr.mu.Lock()
		defer cr.mu.Unlock()
		return len(cr.got)
	}
	free := cr.c.Tickets - len(cr.run.Held)
	if err := brewkit.WaitFor(ctx, time.Minute, 50*time.Millisecond, func() bool { return others() >= free }); err != nil {
		return fmt.Errorf("barista-2 did not get the %d free tickets: %w", free, err)
	}
	if others() > free {
		return fmt.Errorf("%w (%s after barista-1 took them; the lock is %s)", errLostWhileAlive,
			time.Since(cr.taken).Round(100*time.Millisecond), cr.c.Lock)
	}
	return nil
}

// errLostWhileAlive: a held ticket reached barista-2 before barista-1 died.
// The broker took it back from a live barista: its session or connection
// ended (a client on a machine too busy to keep it), or its lock ran out.
// The crash did not happen, so Demo runs it again.
var errLostWhileAlive = errors.New("barista-2 got a held ticket while barista-1 was alive")

// die kills or freezes barista-1.
func (cr *crash) die() error {
	sig, what := syscall.SIGKILL, "killed (SIGKILL): its connection closes"
	if cr.run.How == Freeze {
		sig, what = syscall.SIGSTOP, "frozen (SIGSTOP): its connection stays open"
	}
	cr.died = time.Now()
	if err := cr.holder.Process.Signal(sig); err != nil {
		return err
	}
	cr.say(fmt.Sprintf("%s: barista-1 %s", cr.run.How, what))
	return nil
}

// waitForTheHeld waits until every ticket barista-1 held reached barista-2.
func (cr *crash) waitForTheHeld(ctx context.Context) error {
	back := func() bool {
		cr.mu.Lock()
		defer cr.mu.Unlock()
		for _, n := range cr.run.Held {
			if _, ok := cr.got[n]; !ok {
				return false
			}
		}
		return true
	}
	if err := brewkit.WaitFor(ctx, cr.c.Lock+time.Minute, 20*time.Millisecond, back); err != nil {
		return fmt.Errorf("the held tickets did not come back: %w", err)
	}
	return nil
}

// result is what the crash showed: the held tickets back, their delivery
// counts, and how long after the death and after the take.
func (cr *crash) result() Run {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	run := cr.run
	run.After = cr.lastBack.Sub(cr.died)
	run.Taken = cr.lastBack.Sub(cr.taken)
	for _, n := range run.Held {
		run.Back = append(run.Back, n)
		run.Counts = append(run.Counts, cr.got[n])
	}
	run.Others = len(cr.got) - len(run.Held)
	cr.say(fmt.Sprintf("%s: barista-2 got tickets %v again, delivery counts %v, %s after the death, %s after barista-1 took them",
		run.How, run.Back, run.Counts, run.After.Round(10*time.Millisecond), run.Taken.Round(10*time.Millisecond)))
	return run
}

// take is the second barista: it accepts every ticket it gets.
func take(ctx context.Context, cfg brewkit.Config, group, topic string, got func(*kgo.Record)) error {
	return queue.Serve(ctx, cfg, group, topic, 5, func(r *kgo.Record) kgo.AckStatus {
		got(r)
		return kgo.AckAccept
	})
}

// Hold is the first barista's process: it polls once for up to take
// tickets, prints each as a JSON line and then a line with ticket 0, and
// holds them: no acknowledgement and no next poll (a next poll would accept
// them).
func Hold(ctx context.Context, cfg brewkit.Config, group, topic string, take int) error {
	cl, err := brewkit.NewClient(cfg, queue.ShareOpts(group, topic, int32(take))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := brewkit.Ping(ctx, cfg, cl); err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	var check brewkit.FetchCheck
	for ctx.Err() == nil {
		fs, err := check.Poll(ctx, cl, take)
		if err != nil {
			return err
		}
		if recs := fs.Records(); len(recs) > 0 {
			for _, r := range recs {
				enc.Encode(Held{Ticket: queue.Ticket(r), Count: r.DeliveryCount()}) //nolint:errcheck // the parent reads it
			}
			enc.Encode(Held{}) //nolint:errcheck // the end of what it holds
			break
		}
	}
	<-ctx.Done() // holding, until the end
	return nil
}

// Print writes the two crashes side by side.
func Print(w io.Writer, runs []Run) {
	t := brewkit.NewTable(w, "BARISTA-1", "HELD", "BACK TO BARISTA-2", "DELIVERY COUNT", "AFTER DEATH", "AFTER TAKE")
	for _, r := range runs {
		how := map[How]string{Kill: "killed (SIGKILL)", Freeze: "frozen (SIGSTOP)"}[r.How]
		t.Row(how, join(r.Held), join(r.Back), join(r.Counts), r.After.Round(100*time.Millisecond), r.Taken.Round(100*time.Millisecond))
	}
	t.Flush()
}

// join writes numbers as 1,2,3.
func join[N int | int32](ns []N) string {
	var parts []string
	for _, n := range ns {
		parts = append(parts, strconv.Itoa(int(n)))
	}
	return strings.Join(parts, ",")
}

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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

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
		if err != nil {
			return out, fmt.Errorf("%s: %w", h, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func one(ctx context.Context, cfg brewkit.Config, c Config, how How, say func(string)) (Run, error) {
	run := Run{How: how}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return run, err
	}
	defer cl.Close()
	run.Topic = fmt.Sprintf("brew.tickets.crash.%s.%d", how, rand.Uint32()%1e6)
	group := run.Topic
	if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.Topic{Name: run.Topic, Partitions: 1, RF: 3, Retention: time.Hour}); err != nil {
		return run, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		adm.DeleteTopics(dctx, run.Topic) //nolint:errcheck // leftovers are harmless
		adm.DeleteGroup(dctx, group)      //nolint:errcheck // and so is the group
	}()
	if err := brewkit.SetGroupConfigs(ctx, cl, group, map[string]string{
		"share.auto.offset.reset":       "earliest",
		"share.record.lock.duration.ms": strconv.FormatInt(c.Lock.Milliseconds(), 10),
	}); err != nil {
		return run, err
	}
	if err := queue.Tickets(ctx, cl, run.Topic, c.Tickets); err != nil {
		return run, err
	}

	// The first barista, a process of its own, takes tickets and holds them.
	cmd := brewkit.Command(ctx, cfg, c.Holder, "-group", group, "-topic", run.Topic, "-take", strconv.Itoa(c.Take))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return run, err
	}
	if err := cmd.Start(); err != nil {
		return run, fmt.Errorf("starting the first barista: %w", err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGCONT) //nolint:errcheck // a frozen one must wake to die
		cmd.Process.Kill()                  //nolint:errcheck // gone already is fine
		cmd.Wait()                          //nolint:errcheck // killed on purpose
	}()
	dec := json.NewDecoder(bufio.NewReader(out))
	var taken time.Time // when barista-1's first ticket reached us: the broker acquired them just before
	for {
		var h Held
		if err := dec.Decode(&h); err != nil {
			return run, fmt.Errorf("the first barista ended before it held tickets: %w", err)
		}
		if h.Ticket == 0 {
			break
		}
		if taken.IsZero() {
			taken = time.Now()
		}
		if h.Count != 1 {
			return run, fmt.Errorf("ticket %d reached the first barista with delivery count %d", h.Ticket, h.Count)
		}
		run.Held = append(run.Held, h.Ticket)
	}
	slices.Sort(run.Held)
	say(fmt.Sprintf("%s: barista-1 (pid %d) took tickets %v and holds them", how, cmd.Process.Pid, run.Held))

	// The second barista takes what is free.
	var mu sync.Mutex
	got := map[int]int32{}
	var lastBack time.Time
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	errc := make(chan error, 1)
	go func() {
		errc <- take(cctx, cfg, group, run.Topic, func(r *kgo.Record) {
			mu.Lock()
			defer mu.Unlock()
			n := queue.Ticket(r)
			got[n] = r.DeliveryCount()
			if slices.Contains(run.Held, n) {
				lastBack = time.Now()
			}
		})
	}()
	others := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(got)
	}
	free := c.Tickets - len(run.Held)
	if err := brewkit.WaitFor(ctx, time.Minute, 50*time.Millisecond, func() bool { return others() >= free }); err != nil {
		return run, fmt.Errorf("barista-2 did not get the %d free tickets: %w", free, err)
	}
	if others() > free {
		return run, errors.New("barista-2 got a held ticket while barista-1 was alive")
	}

	// The first barista dies.
	sig, what := syscall.SIGKILL, "killed (SIGKILL): its connection closes"
	if how == Freeze {
		sig, what = syscall.SIGSTOP, "frozen (SIGSTOP): its connection stays open"
	}
	died := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		return run, err
	}
	say(fmt.Sprintf("%s: barista-1 %s", how, what))
	back := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range run.Held {
			if _, ok := got[n]; !ok {
				return false
			}
		}
		return true
	}
	if err := brewkit.WaitFor(ctx, c.Lock+time.Minute, 20*time.Millisecond, back); err != nil {
		return run, fmt.Errorf("the held tickets did not come back: %w", err)
	}
	stop()
	if err := <-errc; err != nil {
		return run, err
	}
	mu.Lock()
	defer mu.Unlock()
	run.After = lastBack.Sub(died)
	run.Taken = lastBack.Sub(taken)
	for _, n := range run.Held {
		run.Back = append(run.Back, n)
		run.Counts = append(run.Counts, got[n])
	}
	run.Others = len(got) - len(run.Held)
	say(fmt.Sprintf("%s: barista-2 got tickets %v again, delivery counts %v, %s after the death, %s after barista-1 took them",
		how, run.Back, run.Counts, run.After.Round(10*time.Millisecond), run.Taken.Round(10*time.Millisecond)))
	return run, nil
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
	enc := json.NewEncoder(os.Stdout)
	var check brewkit.FetchCheck
	for ctx.Err() == nil {
		fs := cl.PollRecords(ctx, take)
		if err := check.Err(fs); err != nil {
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

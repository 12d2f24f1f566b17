package cdc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Options set up the demo.
type Options struct {
	Topic       string
	Schema      string // order-service's schema (reset by Run)
	Slot        string // the replication slot (dropped first if it exists)
	Publication string
	Orders      int           // written while readers are killed
	Kills       int           // how many times the reader is killed
	Seed        uint64        // the kill points and the orders
	Every       time.Duration // the writer's pace in the kill drill
	Down        int           // orders written while no reader runs
	AckEvery    time.Duration // the readers' acknowledgement interval
	Run         string        // names the run's events
	Command     []string      // the reader: this program's `reader` subcommand (drill.Self)
	Progress    func(string)  // when set, a line per step
}

// Defaults are the lecture's demo.
var Defaults = Options{Topic: "brew.outbox.cdc", Schema: "cdc", Slot: "brew_cdc", Publication: "brew_cdc",
	Orders: 100, Kills: 5, Seed: 11, Every: 10 * time.Millisecond, Down: 1000, AckEvery: ReaderDefaults.AckEvery}

// Killed is one kill of the reader.
type Killed struct {
	Kill
	OrderID string
}

// LagRow is the slot while the reader is down.
type LagRow struct {
	Written   int   // orders written since the reader stopped
	Lag       int64 // bytes
	WALStatus string
}

// Result is what the demo measured.
type Result struct {
	Orders, Kills, Down int
	Seed                uint64
	Killed              []Killed

	Written    int      // orders committed (Orders + Down)
	Events     int      // records of the run in the topic
	Unique     int      // distinct orders among them
	Lost       []string // committed orders with no record
	Duplicates int      // records beyond each order's first
	OutOfOrder int      // orders whose record came before an earlier order's, within a partition

	LagStopped LagRow // the slot right after the reader stopped
	LagDown    []LagRow
	CatchUp    time.Duration // from the reader's start until the slot had everything
	LagAfter   int64         // after it caught up

	DropWhileActive string // what PostgreSQL said to dropping the slot under a reader
	DroppedAfter    bool   // dropped once the reader stopped
}

// Run resets the schema, creates the publication and the slot, and runs the
// kill drill, the reader outage and the slot's drop (see the package doc).
func Run(ctx context.Context, cfg brewkit.Config, o Options) (Result, error) {
	res := Result{Orders: o.Orders, Kills: o.Kills, Down: o.Down, Seed: o.Seed}
	say := func(format string, args ...any) {
		if o.Progress != nil {
			o.Progress(fmt.Sprintf(format, args...))
		}
	}
	cl, adm, err := drill.Kafka(ctx, cfg, brewkit.TopicNamed(o.Topic, 6))
	if err != nil {
		return res, err
	}
	defer cl.Close()
	p, err := db.Connect(ctx)
	if err != nil {
		return res, err
	}
	defer p.Close()
	if err := Release(ctx, p, o.Publication, o.Slot); err != nil {
		return res, err
	}
	if err := db.ResetSchema(ctx, p, o.Schema, DDL...); err != nil {
		return res, err
	}
	if err := Capture(ctx, p, o.Schema, o.Publication, o.Slot); err != nil {
		return res, err
	}
	// A slot left behind holds WAL forever: the demo drops it on every way out.
	defer Release(context.WithoutCancel(ctx), p, o.Publication, o.Slot) //nolint:errcheck // the happy path dropped it already
	app, err := db.ConnectIn(ctx, o.Schema)
	if err != nil {
		return res, err
	}
	defer app.Close()
	from, err := drill.Start(ctx, adm, o.Topic)
	if err != nil {
		return res, err
	}
	reader := func(kill string) []string {
		args := []string{"-slot", o.Slot, "-publication", o.Publication, "-topic", o.Topic, "-ack-every", o.AckEvery.String()}
		if kill != "" {
			args = append(args, "-kill-at", kill)
		}
		return args
	}

	// 1. The kill drill: order-service writes at its pace while readers are
	// killed at seeded orders, each restarted at once.
	var mu sync.Mutex
	var written []Written
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	wdone := make(chan error, 1)
	go func() {
		got, err := Write(wctx, app, Writes{Schema: o.Schema, Run: o.Run, Seed: o.Seed, From: 0, To: o.Orders, Every: o.Every})
		mu.Lock()
		written = append(written, got...)
		mu.Unlock()
		wdone <- err
	}()
	kills := drill.Points(o.Seed, o.Kills, 0, o.Orders-max(1, o.Orders/5))
	for i, k := range kills {
		kill := Kill{Stage: Stages[i%len(Stages)], Seq: int64(k)}
		killed, err := drill.Child(ctx, cfg, o.Command, reader(drill.Spec(kill.Stage, k))...)
		if err != nil {
			return res, fmt.Errorf("reader: %w", err)
		}
		if !killed {
			return res, fmt.Errorf("the reader was to be killed at order %d, and it ended", k)
		}
		res.Killed = append(res.Killed, Killed{Kill: kill, OrderID: brewkit.OrderID(int64(k))})
		say("reader killed -9 at %s (%s); restarting", brewkit.OrderID(int64(k)), SaysStage(kill.Stage))
	}
	r, err := startReader(ctx, cfg, o.Command, reader("")...)
	if err != nil {
		return res, err
	}
	defer r.stop()
	if err := <-wdone; err != nil {
		return res, err
	}
	say("%d orders written; waiting for the reader to acknowledge them all", o.Orders)
	if _, err := waitCaughtUp(ctx, p, o.Slot, r); err != nil {
		return res, err
	}
	if err := r.stop(); err != nil {
		return res, err
	}

	// 2. No reader: order-service goes on writing, the slot holds the WAL.
	st, err := Slot(ctx, p, o.Slot)
	if err != nil {
		return res, err
	}
	res.LagStopped = LagRow{Lag: st.Lag, WALStatus: st.WALStatus}
	step := max(1, o.Down/4)
	var sample error
	got, err := Write(ctx, app, Writes{Schema: o.Schema, Run: o.Run, Seed: o.Seed, From: o.Orders, To: o.Orders + o.Down,
		Written: func(w Written) {
			if n := w.N - o.Orders + 1; n%step == 0 || n == o.Down {
				st, err := Slot(ctx, p, o.Slot)
				sample = errors.Join(sample, err)
				res.LagDown = append(res.LagDown, LagRow{Written: n, Lag: st.Lag, WALStatus: st.WALStatus})
			}
		}})
	written = append(written, got...)
	if err = errors.Join(err, sample); err != nil {
		return res, err
	}
	say("%d orders written with no reader: the slot lags %s", o.Down, Bytes(res.LagDown[len(res.LagDown)-1].Lag))
	start := time.Now()
	r, err = startReader(ctx, cfg, o.Command, reader("")...)
	if err != nil {
		return res, err
	}
	defer r.stop()
	if _, err := waitCaughtUp(ctx, p, o.Slot, r); err != nil {
		return res, err
	}
	res.CatchUp = time.Since(start)
	if st, err = Slot(ctx, p, o.Slot); err != nil {
		return res, err
	}
	res.LagAfter = st.Lag
	say("the reader caught up in %s", res.CatchUp.Round(time.Millisecond))

	// 3. Dropping the slot: refused while the reader streams, done once it stopped.
	if _, err := DropSlot(ctx, p, o.Slot); err == nil {
		return res, errors.New("PostgreSQL dropped a slot a reader was streaming from")
	} else {
		res.DropWhileActive = err.Error()
	}
	if err := r.stop(); err != nil {
		return res, err
	}
	if err := Release(ctx, p, o.Publication, o.Slot); err != nil {
		return res, err
	}
	if st, err = Slot(ctx, p, o.Slot); err != nil {
		return res, err
	}
	res.DroppedAfter = !st.Exists

	// 4. What reached Kafka.
	events, err := drill.Read(ctx, cfg, adm, o.Topic, from, o.Run)
	if err != nil {
		return res, err
	}
	res.Written, res.Events = len(written), len(events)
	tally(&res, written, events)
	return res, nil
}

// tally counts lost and duplicated orders, and the orders that overtook an
// earlier one in their partition.
func tally(res *Result, written []Written, events []drill.Got) {
	count := drill.Count(events)
	res.Unique = len(count)
	for _, w := range written {
		if count[w.OrderID] == 0 {
			res.Lost = append(res.Lost, w.OrderID)
		}
	}
	for _, n := range count {
		res.Duplicates += n - 1
	}
	// Per partition, first deliveries come in the order of the orders (they
	// committed in that order, one writer): a redelivery repeats earlier
	// ones, never skips ahead.
	seen := map[string]bool{}
	last := map[int32]int64{}
	for _, e := range events {
		if seen[e.OrderID] {
			continue
		}
		seen[e.OrderID] = true
		if prev, ok := last[e.Partition]; ok && e.Seq < prev {
			res.OutOfOrder++
		}
		last[e.Partition] = e.Seq
	}
}

// Bytes is n for people: 512 B, 84.2 kB, 1.3 MB.
func Bytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000_000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1000_000)
}

// waitCaughtUp waits until slot's reader acknowledged the WAL as it ends
// now (everything committed so far), at most 60 s; a reader that exits
// meanwhile fails it at once.
func waitCaughtUp(ctx context.Context, p *pgxpool.Pool, slot string, r *child) (time.Duration, error) {
	lsn, err := CurrentLSN(ctx, p)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	var last error
	err = brewkit.WaitFor(ctx, 60*time.Second, 20*time.Millisecond, func() bool {
		if r.exited() {
			return true
		}
		ok, err := CaughtUp(ctx, p, slot, lsn)
		last = err
		return ok || err != nil
	})
	if r.exited() {
		return 0, fmt.Errorf("the reader exited: %s", r.why())
	}
	if err = errors.Join(err, last); err != nil {
		st, _ := Slot(ctx, p, slot)
		return 0, fmt.Errorf("the reader did not acknowledge %s within 60 s (slot at %s): %w", lsn, st.Confirmed, err)
	}
	return time.Since(start), nil
}

// child is a reader process the demo stops itself (SIGTERM).
type child struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan struct{}
	err    error
	once   sync.Once
	result error
}

func startReader(ctx context.Context, cfg brewkit.Config, command []string, args ...string) (*child, error) {
	c := &child{done: make(chan struct{})}
	c.cmd = brewkit.Command(ctx, cfg, command, args...)
	c.cmd.Stderr = &c.stderr
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the reader: %w", err)
	}
	go func() { c.err = c.cmd.Wait(); close(c.done) }()
	return c, nil
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *child) why() string {
	<-c.done
	msg := strings.TrimSpace(c.stderr.String())
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = msg[i+1:]
	}
	if msg == "" && c.err != nil {
		msg = c.err.Error()
	}
	return msg
}

// stop sends SIGTERM and waits: the reader flushes, acknowledges and exits
// (status 143, brewkit.Main's for SIGTERM). Once; later calls return the
// same.
func (c *child) stop() error {
	c.once.Do(func() {
		if !c.exited() {
			_ = c.cmd.Process.Signal(syscall.SIGTERM)
		}
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
		var exit *exec.ExitError
		if c.err != nil && !(errors.As(c.err, &exit) && exit.ExitCode() == 143) {
			c.result = fmt.Errorf("the reader: %s", c.why())
		}
	})
	return c.result
}

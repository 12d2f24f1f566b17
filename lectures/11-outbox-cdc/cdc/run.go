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
	d := &demo{o: o, cfg: cfg, res: Result{Orders: o.Orders, Kills: o.Kills, Down: o.Down, Seed: o.Seed}}
	cl, adm, err := drill.Kafka(ctx, cfg, brewkit.TopicNamed(o.Topic, 6))
	if err != nil {
		return d.res, err
	}
	defer cl.Close()
	if d.p, err = db.Connect(ctx); err != nil {
		return d.res, err
	}
	defer d.p.Close()
	if err := Release(ctx, d.p, o.Publication, o.Slot); err != nil {
		return d.res, err
	}
	if err := db.ResetSchema(ctx, d.p, o.Schema, DDL...); err != nil {
		return d.res, err
	}
	if err := Capture(ctx, d.p, o.Schema, o.Publication, o.Slot); err != nil {
		return d.res, err
	}
	// A slot left behind holds WAL forever: the demo drops it on every way out.
	defer Release(context.WithoutCancel(ctx), d.p, o.Publication, o.Slot) //nolint:errcheck // the happy path dropped it already
	if d.app, err = db.ConnectIn(ctx, o.Schema); err != nil {
		return d.res, err
	}
	defer d.app.Close()
	from, err := drill.Start(ctx, adm, o.Topic)
	if err != nil {
		return d.res, err
	}

	written, err := d.killDrill(ctx)
	if err != nil {
		return d.res, err
	}
	more, r, err := d.readerDown(ctx)
	written = append(written, more...)
	if r != nil {
		defer r.stop()
	}
	if err != nil {
		return d.res, err
	}
	if err := d.dropSlot(ctx, r); err != nil {
		return d.res, err
	}

	// 4. What reached Kafka.
	events, err := drill.Read(ctx, cfg, adm, o.Topic, from, o.Run)
	if err != nil {
		return d.res, err
	}
	d.res.Written, d.res.Events = len(written), len(events)
	tally(&d.res, written, events)
	return d.res, nil
}

// demo is what Run's steps share.
type demo struct {
	o      Options
	cfg    brewkit.Config
	p, app *pgxpool.Pool // the course's connection, order-service's
	res    Result
}

func (d *demo) say(format string, args ...any) {
	if d.o.Progress != nil {
		d.o.Progress(fmt.Sprintf(format, args...))
	}
}

// readerArgs are a reader's flags; kill, when not "", where it is killed.
func (d *demo) readerArgs(kill string) []string {
	o := d.o
	args := []string{"-slot", o.Slot, "-publication", o.Publication, "-topic", o.Topic, "-ack-every", o.AckEvery.String()}
	if kill != "" {
		args = append(args, "-kill-at", kill)
	}
	return args
}

// killDrill is step 1: order-service writes at its pace while readers are
// killed at seeded orders, each restarted at once; then one reader runs
// until the slot is acknowledged up to the last order.
func (d *demo) killDrill(ctx context.Context) ([]Written, error) {
	o := d.o
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	type writes struct {
		got []Written
		err error
	}
	wdone := make(chan writes, 1)
	go func() {
		got, err := Write(wctx, d.app, Writes{Schema: o.Schema, Run: o.Run, Seed: o.Seed, From: 0, To: o.Orders, Every: o.Every})
		wdone <- writes{got, err}
	}()
	kills := drill.Points(o.Seed, o.Kills, 0, o.Orders-max(1, o.Orders/5))
	for i, k := range kills {
		kill := Kill{Stage: Stages[i%len(Stages)], Seq: int64(k)}
		killed, err := drill.Child(ctx, d.cfg, o.Command, d.readerArgs(drill.Spec(kill.Stage, k))...)
		if err != nil {
			return nil, fmt.Errorf("reader: %w", err)
		}
		if !killed {
			return nil, fmt.Errorf("the reader was to be killed at order %d, and it ended", k)
		}
		d.res.Killed = append(d.res.Killed, Killed{Kill: kill, OrderID: brewkit.OrderID(int64(k))})
		d.say("reader killed -9 at %s (%s); restarting", brewkit.OrderID(int64(k)), SaysStage(kill.Stage))
	}
	r, err := startReader(ctx, d.cfg, o.Command, d.readerArgs("")...)
	if err != nil {
		return nil, err
	}
	defer r.stop()
	w := <-wdone
	if w.err != nil {
		return w.got, w.err
	}
	d.say("%d orders written; waiting for the reader to acknowledge them all", o.Orders)
	if _, err := waitCaughtUp(ctx, d.p, o.Slot, r); err != nil {
		return w.got, err
	}
	return w.got, r.stop()
}

// readerDown is step 2: no reader, order-service goes on writing and the
// slot holds the WAL (sampled four times); then a reader starts and catches
// up. It returns the orders written and that reader, still running.
func (d *demo) readerDown(ctx context.Context) ([]Written, *child, error) {
	o := d.o
	st, err := Slot(ctx, d.p, o.Slot)
	if err != nil {
		return nil, nil, err
	}
	d.res.LagStopped = LagRow{Lag: st.Lag, WALStatus: st.WALStatus}
	step := max(1, o.Down/4)
	var sample error
	got, err := Write(ctx, d.app, Writes{Schema: o.Schema, Run: o.Run, Seed: o.Seed, From: o.Orders, To: o.Orders + o.Down,
		Written: func(w Written) {
			if n := w.N - o.Orders + 1; n%step == 0 || n == o.Down {
				st, err := Slot(ctx, d.p, o.Slot)
				sample = errors.Join(sample, err)
				d.res.LagDown = append(d.res.LagDown, LagRow{Written: n, Lag: st.Lag, WALStatus: st.WALStatus})
			}
		}})
	if err = errors.Join(err, sample); err != nil {
		return got, nil, err
	}
	d.say("%d orders written with no reader: the slot lags %s", o.Down, Bytes(d.res.LagDown[len(d.res.LagDown)-1].Lag))
	start := time.Now()
	r, err := startReader(ctx, d.cfg, o.Command, d.readerArgs("")...)
	if err != nil {
		return got, nil, err
	}
	if _, err := waitCaughtUp(ctx, d.p, o.Slot, r); err != nil {
		return got, r, err
	}
	d.res.CatchUp = time.Since(start)
	if st, err = Slot(ctx, d.p, o.Slot); err != nil {
		return got, r, err
	}
	d.res.LagAfter = st.Lag
	d.say("the reader caught up in %s", d.res.CatchUp.Round(time.Millisecond))
	return got, r, nil
}

// dropSlot is step 3: dropping the slot is refused while the reader r
// streams from it, and done once it stopped.
func (d *demo) dropSlot(ctx context.Context, r *child) error {
	if _, err := DropSlot(ctx, d.p, d.o.Slot); err == nil {
		return errors.New("PostgreSQL dropped a slot a reader was streaming from")
	} else {
		d.res.DropWhileActive = err.Error()
	}
	if err := r.stop(); err != nil {
		return err
	}
	if err := Release(ctx, d.p, d.o.Publication, d.o.Slot); err != nil {
		return err
	}
	st, err := Slot(ctx, d.p, d.o.Slot)
	if err != nil {
		return err
	}
	d.res.DroppedAfter = !st.Exists
	return nil
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

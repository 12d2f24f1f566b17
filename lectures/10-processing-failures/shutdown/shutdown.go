// Package shutdown measures a graceful stop of courier-service against a
// crash. A courier process (backpressure.Courier, a queue and workers
// booking at the partner, committing in order what is booked) gets a signal
// in the middle of a batch, and a next instance reads on from what it
// committed:
//
//   - SIGTERM (what Kubernetes sends first, and what `docker stop` and
//     systemd send): the courier stops polling, books what its queue holds,
//     commits what is booked and leaves the group. The next instance re-reads
//     nothing the first booked, and gets the partitions at once.
//   - SIGKILL (the OOM killer, a node lost, the grace period over): no code
//     runs. The next instance re-reads everything booked since the last
//     commit, and waits for the dead member's session to time out before the
//     group hands it the partitions. The idempotency key keeps the re-read
//     orders from being booked twice.
//
// Both counts come from the partner's booking log and the records the next
// instance reports reading.
package shutdown

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/10-processing-failures/backpressure"
	"github.com/brew-course/kafka/lectures/10-processing-failures/courier"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Options set up the demo.
type Options struct {
	Topic          string
	Run            string
	Orders         int
	Latency        time.Duration // the partner's time per booking
	Workers        int
	Queue          int
	StopAfter      int           // the signal comes once the courier booked this many
	CommitEvery    time.Duration // how often the courier commits what is booked
	SessionTimeout time.Duration
	Drain          time.Duration // the graceful stop's bound
	// Courier is the command that runs one courier process (its program
	// and the subcommand `courier`); PartnerAddr is where it books.
	Courier     []string
	Partner     *partner.Client
	PartnerAddr string
	Progress    func(string)
}

// Defaults are the lecture's run: 600 orders at 20 ms a booking, 8 workers
// (400 bookings a second), the signal after 300.
var Defaults = Options{Topic: courier.Orders, Orders: 600, Latency: 20 * time.Millisecond, Workers: 8, Queue: 64,
	StopAfter: 300, CommitEvery: 500 * time.Millisecond, SessionTimeout: 6 * time.Second, Drain: 10 * time.Second}

// Signals are the table's rows, in order.
var Signals = []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}

// Row is one signal's run.
type Row struct {
	Signal    string
	Booked    int           // orders the first instance booked (the partner's log when it ended)
	Drained   int           // of them, booked after the signal (SIGTERM)
	ExitAfter time.Duration // from the signal to the process's end
	Committed int64         // records the first instance committed
	// NextAssigned is how long the next instance waited for its partitions.
	NextAssigned time.Duration
	Reread       int // records the next instance read whose order the first had booked
	BookedTwice  int // orders the partner booked more than once
	Replays      int // calls the partner answered with the booking its key already had
	Lost         int // orders never booked
}

// Run runs one row per signal, each on orders of its own.
func Run(ctx context.Context, cfg brewkit.Config, o Options) ([]Row, error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	if o.Topic == courier.Orders {
		if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.Orders); err != nil {
			return nil, err
		}
	}
	var rows []Row
	for _, sig := range Signals {
		r, err := runSignal(ctx, cfg, cl, adm, o, sig)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", name(sig), err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func name(sig syscall.Signal) string {
	return map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGKILL: "SIGKILL"}[sig]
}

func runSignal(ctx context.Context, cfg brewkit.Config, cl *kgo.Client, adm *kadm.Client, o Options, sig syscall.Signal) (Row, error) {
	row := Row{Signal: name(sig)}
	say := func(format string, args ...any) {
		if o.Progress != nil {
			o.Progress(row.Signal + ": " + fmt.Sprintf(format, args...))
		}
	}
	b := courier.Batch{Topic: o.Topic, Run: o.Run + "-" + strings.ToLower(row.Signal), Orders: o.Orders}
	if err := b.Write(ctx, cl); err != nil {
		return row, err
	}
	defer adm.DeleteGroup(context.WithoutCancel(ctx), b.Group()) //nolint:errcheck // a leftover demo group is harmless
	if err := o.Partner.Reset(ctx); err != nil {
		return row, err
	}
	if _, err := o.Partner.SetFaults(ctx, partner.Faults{Latency: partner.Duration(o.Latency)}); err != nil {
		return row, err
	}
	c := backpressure.Courier{Topic: o.Topic, Group: b.Group(), Workers: o.Workers, Queue: o.Queue, Low: o.Queue / 4,
		CommitEvery: o.CommitEvery, Drain: o.Drain, SessionTimeout: o.SessionTimeout, SampleEvery: 10 * time.Millisecond, Reads: true}

	first, err := backpressure.Start(ctx, cfg, o.Courier, c, o.PartnerAddr)
	if err != nil {
		return row, err
	}
	defer first.Wait(30 * time.Second)  //nolint:errcheck // an early return's stop
	defer first.Signal(syscall.SIGTERM) //nolint:errcheck
	if err := first.WaitAssigned(ctx, 30*time.Second); err != nil {
		return row, err
	}
	if err := waitFor(ctx, first, time.Minute, func() bool { return first.Last().Booked >= int64(o.StopAfter) }); err != nil {
		return row, fmt.Errorf("waiting for %d bookings: %w", o.StopAfter, err)
	}
	atSignal := first.Last().Booked
	sent := time.Now()
	if err := first.Signal(sig); err != nil {
		return row, err
	}
	exited, err := first.Wait(30 * time.Second)
	if err != nil {
		return row, err
	}
	row.ExitAfter = exited.Sub(sent)
	if st := first.Stopped(); st != nil {
		row.Drained = st.Drained
	}
	// A killed courier's last calls may still be in the partner, which
	// books what reached it: the log is read once every call is answered.
	var log partner.Log
	err = brewkit.WaitFor(ctx, 10*time.Second, 10*time.Millisecond, func() bool {
		log, err = o.Partner.Log(ctx)
		c := log.Calls
		return err == nil && c.Total == c.Booked+c.Replayed+c.Malformed+c.Refused+c.TimedOut
	})
	if err != nil {
		return row, fmt.Errorf("the partner's log: %w", err)
	}
	done := map[string]bool{}
	for _, bk := range log.Bookings {
		done[bk.OrderID] = true
	}
	row.Booked = len(done)
	lag, err := groupLag(ctx, adm, b.Group())
	if err != nil {
		return row, err
	}
	row.Committed = int64(o.Orders) - lag
	say("the courier got %s after %d bookings and ended %s later; %d booked, %d committed; starting the next instance",
		row.Signal, atSignal, row.ExitAfter.Round(time.Millisecond), row.Booked, row.Committed)

	next, err := backpressure.Start(ctx, cfg, o.Courier, c, o.PartnerAddr)
	if err != nil {
		return row, err
	}
	defer next.Wait(30 * time.Second)  //nolint:errcheck
	defer next.Signal(syscall.SIGTERM) //nolint:errcheck
	if err := next.WaitAssigned(ctx, o.SessionTimeout+30*time.Second); err != nil {
		return row, err
	}
	row.NextAssigned = next.AssignedAfter()
	say("the next instance got its partitions %s after its start", row.NextAssigned.Round(time.Millisecond))
	err = waitFor(ctx, next, time.Minute, func() bool {
		l, err := groupLag(ctx, adm, b.Group())
		return err == nil && l == 0 && next.Last().Booked+int64(row.Booked) >= int64(o.Orders)
	})
	if err != nil {
		return row, fmt.Errorf("waiting for the next instance to book the rest: %w", err)
	}
	if err := next.Signal(syscall.SIGTERM); err != nil {
		return row, err
	}
	if _, err := next.Wait(30 * time.Second); err != nil {
		return row, err
	}
	for _, r := range next.Reads() {
		if done[r.Order] {
			row.Reread++
		}
	}
	log, err = o.Partner.Log(ctx)
	if err != nil {
		return row, err
	}
	row.BookedTwice, row.Replays = len(log.Doubles()), log.Calls.Replayed
	times := log.Times()
	for _, id := range b.IDs {
		if times[id] == 0 {
			row.Lost++
		}
	}
	return row, nil
}

// waitFor polls cond every 10 ms until it holds, the process ends or limit
// passes.
func waitFor(ctx context.Context, p *backpressure.Proc, limit time.Duration, cond func() bool) error {
	deadline := time.After(limit)
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.Done():
			if _, err := p.Wait(0); err != nil {
				return err
			}
			return fmt.Errorf("the courier process ended")
		case <-deadline:
			return fmt.Errorf("not within %s", limit)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

func groupLag(ctx context.Context, adm *kadm.Client, group string) (int64, error) {
	lags, err := adm.Lag(ctx, group)
	if err != nil {
		return 0, err
	}
	l := lags[group]
	if err := l.Error(); err != nil {
		return 0, fmt.Errorf("the lag of %s: %w", group, err)
	}
	return l.Lag.Total(), nil
}

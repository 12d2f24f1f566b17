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

// runSignal runs one row: a courier process gets sig once it has booked
// o.StopAfter of a batch of orders of its own, and a next instance of the
// same group books the rest.
func runSignal(ctx context.Context, cfg brewkit.Config, cl *kgo.Client, adm *kadm.Client, o Options, sig syscall.Signal) (Row, error) {
	b := courier.Batch{Topic: o.Topic, Run: o.Run + "-" + strings.ToLower(name(sig)), Orders: o.Orders}
	r := &signalRun{o: o, adm: adm, group: b.Group(), row: Row{Signal: name(sig)}}
	if err := b.Write(ctx, cl); err != nil {
		return r.row, err
	}
	defer adm.DeleteGroup(context.WithoutCancel(ctx), r.group) //nolint:errcheck // a leftover demo group is harmless
	if err := o.Partner.Reset(ctx); err != nil {
		return r.row, err
	}
	if _, err := o.Partner.SetFaults(ctx, partner.Faults{Latency: partner.Duration(o.Latency)}); err != nil {
		return r.row, err
	}
	c := backpressure.Courier{Topic: o.Topic, Group: r.group, Workers: o.Workers, Queue: o.Queue, Low: o.Queue / 4,
		CommitEvery: o.CommitEvery, Drain: o.Drain, SessionTimeout: o.SessionTimeout, SampleEvery: 10 * time.Millisecond, Reads: true}

	first, err := backpressure.Start(ctx, cfg, o.Courier, c, o.PartnerAddr)
	if err != nil {
		return r.row, err
	}
	defer first.Wait(30 * time.Second)  //nolint:errcheck // an early return's stop
	defer first.Signal(syscall.SIGTERM) //nolint:errcheck
	if err := first.WaitAssigned(ctx, 30*time.Second); err != nil {
		return r.row, err
	}
	// The signal comes in the middle of the batch, with orders queued: what
	// a graceful stop does with them is the lesson. (A CI run whose machine
	// stalled the courier's loop sent it with the queue empty, and the
	// stop had nothing to book.)
	holding := func() bool { l := first.Last(); return l.Booked >= int64(o.StopAfter) && l.Queue > 0 }
	if err := waitFor(ctx, first, time.Minute, holding); err != nil {
		return r.row, fmt.Errorf("waiting for %d bookings with orders queued: %w", o.StopAfter, err)
	}
	atSignal := first.Last().Booked
	if err := r.signal(first, sig); err != nil {
		return r.row, err
	}
	booked, err := r.booked(ctx)
	if err != nil {
		return r.row, err
	}
	lag, err := groupLag(ctx, adm, r.group)
	if err != nil {
		return r.row, err
	}
	r.row.Committed = int64(o.Orders) - lag
	r.say("the courier got %s after %d bookings and ended %s later; %d booked, %d committed; starting the next instance",
		r.row.Signal, atSignal, r.row.ExitAfter.Round(time.Millisecond), r.row.Booked, r.row.Committed)

	next, err := backpressure.Start(ctx, cfg, o.Courier, c, o.PartnerAddr)
	if err != nil {
		return r.row, err
	}
	defer next.Wait(30 * time.Second)  //nolint:errcheck
	defer next.Signal(syscall.SIGTERM) //nolint:errcheck
	if err := r.bookRest(ctx, next); err != nil {
		return r.row, err
	}
	if err := r.tally(ctx, next, booked, b.IDs); err != nil {
		return r.row, err
	}
	return r.row, nil
}

// signalRun is one runSignal: its group and the row it fills.
type signalRun struct {
	o     Options
	adm   *kadm.Client
	group string
	row   Row
}

// signal sends sig to the courier process p and waits for it to end: how
// long that took, and what a graceful stop booked after the signal.
func (r *signalRun) signal(p *backpressure.Proc, sig syscall.Signal) error {
	sent := time.Now()
	if err := p.Signal(sig); err != nil {
		return err
	}
	exited, err := p.Wait(30 * time.Second)
	if err != nil {
		return err
	}
	r.row.ExitAfter = exited.Sub(sent)
	if st := p.Stopped(); st != nil {
		r.row.Drained = st.Drained
	}
	return nil
}

// bookRest waits for the next instance p to get its partitions (after a
// SIGKILL, once the dead member's session times out) and to book the rest,
// the group's lag 0; then stops it with SIGTERM.
func (r *signalRun) bookRest(ctx context.Context, p *backpressure.Proc) error {
	if err := p.WaitAssigned(ctx, r.o.SessionTimeout+30*time.Second); err != nil {
		return err
	}
	r.row.NextAssigned = p.AssignedAfter()
	r.say("the next instance got its partitions %s after its start", r.row.NextAssigned.Round(time.Millisecond))
	err := waitFor(ctx, p, time.Minute, func() bool {
		l, err := groupLag(ctx, r.adm, r.group)
		return err == nil && l == 0 && p.Last().Booked+int64(r.row.Booked) >= int64(r.o.Orders)
	})
	if err != nil {
		return fmt.Errorf("waiting for the next instance to book the rest: %w", err)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	_, err = p.Wait(30 * time.Second)
	return err
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

// groupLag is group's lag: the records of the batch it has not committed.
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

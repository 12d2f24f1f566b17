package backpressure

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Mode is how the courier queues what it reads.
type Mode string

const (
	Bounded   Mode = "bounded"   // a queue of Queue, fetching paused while it is full
	Unbounded Mode = "unbounded" // polls as fast as it can into a queue without a limit
)

// Modes are the table's rows, in order.
var Modes = []Mode{Bounded, Unbounded}

// Options set up the demo.
type Options struct {
	Topic   string
	Run     string        // names the orders and the groups
	Orders  int           // written at Rate from the start of each mode's run
	Pad     int           // bytes of padding in each order's value
	Rate    int           // orders written per second
	Slow    time.Duration // the partner takes Latency a booking until every order is written, and at least this long
	Latency time.Duration
	Workers int
	Queue   int // the bounded mode's queue; it resumes at Queue/4
	Watch   time.Duration
	// Courier is the command that runs one courier process (its program
	// and the subcommand `courier`); PartnerAddr is where it books.
	Courier     []string
	Partner     *partner.Client
	PartnerAddr string
	// Progress, when set, gets a line every second.
	Progress func(string)
}

// Rush is the topic of the rush hour's orders: 130 MB of them a run, so a
// topic of their own, kept an hour, rather than brew.orders.v1's 30 days
// (lectures 03 and 07 read that one from its start). Under brew.courier.,
// `make reset-lecture L=10` deletes it.
var Rush = brewkit.Topic{Name: "brew.courier.rush", Partitions: 6, RF: 3, Retention: time.Hour}

// Defaults are the lecture's run: at rush hour 50,000 orders of 1 KiB come
// in 4 s, while the partner takes 200 ms a booking; 16 workers book them.
var Defaults = Options{Topic: Rush.Name, Orders: 50_000, Pad: 1024, Rate: 12_500,
	Slow: 4 * time.Second, Latency: 200 * time.Millisecond, Workers: 16, Queue: 2000, Watch: 10 * time.Second}

// Point is one second of a mode's run.
type Point struct {
	Second  int
	Written int
	Lag     int64 // the group's lag: orders written and not committed
	Queue   int
	RSS     int64 // bytes
	Paused  bool
}

// Result is one mode's run.
type Result struct {
	Mode        Mode
	Timeline    []Point
	MaxQueue    int
	PeakRSS     int64 // VmHWM of the courier process, bytes
	MaxLag      int64
	Pauses      int
	Revoked     int
	Booked      int // orders of the run the partner booked
	BookedTwice int
	Elapsed     time.Duration // from the first order written to the last booked and committed
}

// RSSBound is what the README promises of the bounded courier with the
// defaults: its peak RSS stays under it (measured: 27 to 29 MiB). It is the
// Go runtime and the HTTP client (about 15 MiB), kgo's buffered fetches (one
// response per broker, up to FetchPartitionBytes a partition: 1.5 MiB for 6
// partitions, and as much again decompressed), the queue (2,000 orders of
// 1.3 KiB) and the garbage the collector lets grow to as much as what is
// live (GOGC=100). The backlog is not in it.
const RSSBound = 40 << 20

// Low is where the bounded mode resumes.
func (o Options) Low() int { return o.Queue / 4 }

// Run runs the modes one after the other, each on orders of its own.
func Run(ctx context.Context, cfg brewkit.Config, o Options) ([]Result, error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	for _, t := range []brewkit.Topic{Rush, brewkit.Orders} {
		if o.Topic == t.Name {
			if _, err := brewkit.EnsureTopics(ctx, adm, t); err != nil {
				return nil, err
			}
		}
	}
	var out []Result
	for _, m := range Modes {
		r, err := runMode(ctx, cfg, adm, o, m)
		if err != nil {
			return out, fmt.Errorf("%s: %w", m, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// runMode runs mode m's courier, a process of its own, through a rush hour
// of orders of its own: the partner is slow until every order is written
// (and o.Slow has passed), and the run is watched until every order is
// booked and committed and o.Watch has passed; then the courier is stopped.
func runMode(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, o Options, m Mode) (Result, error) {
	r := &modeRun{o: o, adm: adm, run: o.Run + "-" + string(m), res: Result{Mode: m}}
	r.group = "brew.courier." + r.run
	if err := startAtEnd(ctx, adm, r.group, o.Topic); err != nil {
		return r.res, err
	}
	defer adm.DeleteGroup(context.WithoutCancel(ctx), r.group) //nolint:errcheck // a leftover demo group is harmless
	if err := o.Partner.Reset(ctx); err != nil {
		return r.res, err
	}
	if _, err := o.Partner.SetFaults(ctx, partner.Faults{Latency: partner.Duration(o.Latency)}); err != nil {
		return r.res, err
	}
	c := Courier{Topic: o.Topic, Group: r.group, Workers: o.Workers, CommitEvery: 500 * time.Millisecond, Drain: time.Second}
	if m == Bounded {
		c.Queue, c.Low = o.Queue, o.Low()
	}
	p, err := Start(ctx, cfg, o.Courier, c, o.PartnerAddr)
	if err != nil {
		return r.res, err
	}
	r.p = p
	defer p.Wait(15 * time.Second)  //nolint:errcheck // an early return's stop
	defer p.Signal(syscall.SIGTERM) //nolint:errcheck
	if err := p.WaitAssigned(ctx, 30*time.Second); err != nil {
		return r.res, err
	}

	// A writer of the mode's own: both modes pay the same first writes
	// (metadata, the producer id).
	w, err := brewkit.NewClient(cfg)
	if err != nil {
		return r.res, err
	}
	defer w.Close()
	r.start = time.Now()
	go r.write(ctx, w)
	if err := r.watch(ctx); err != nil {
		return r.res, err
	}

	if err := p.Signal(syscall.SIGTERM); err != nil {
		return r.res, err
	}
	if _, err := p.Wait(15 * time.Second); err != nil {
		return r.res, err
	}
	if err := r.stopped(); err != nil {
		return r.res, err
	}
	if err := r.tally(ctx); err != nil {
		return r.res, err
	}
	return r.res, nil
}

// modeRun is one runMode: its orders and group, its courier process, and
// what is measured of it.
type modeRun struct {
	o     Options
	adm   *kadm.Client
	run   string // names the mode's orders: run-00000 on
	group string
	p     *Proc
	start time.Time // the first order written
	res   Result

	mu       sync.Mutex
	written  int   // orders written and acknowledged
	writeErr error // why the writer stopped early
}

// write writes the mode's orders with w, counting those acknowledged.
func (r *modeRun) write(ctx context.Context, w *kgo.Client) {
	_, err := write(ctx, w, r.o, r.run, r.acked)
	r.mu.Lock()
	r.writeErr = err
	r.mu.Unlock()
}

// watch follows the run every 250 ms until every order is written, booked
// and committed (the group's lag is 0) and o.Watch has passed. Once the
// rush is over the partner is fast again.
func (r *modeRun) watch(ctx context.Context) error {
	slow := true
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(r.o.Watch + 2*time.Minute)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.p.Done():
			_, err := r.p.Wait(0)
			if err == nil {
				err = fmt.Errorf("the courier process ended")
			}
			return err
		case <-limit:
			return fmt.Errorf("not every order booked within %s", r.o.Watch+2*time.Minute)
		case <-tick.C:
		}
		at := time.Since(r.start)
		n, err := r.writtenNow() // before the lag: what it counts is in the lag
		if err != nil {
			return err
		}
		if slow && n == r.o.Orders && at >= r.o.Slow {
			// The rush is over: the partner is fast again.
			if _, err := r.o.Partner.SetFaults(ctx, partner.Faults{}); err != nil {
				return err
			}
			slow = false
		}
		lag, err := groupLag(ctx, r.adm, r.group)
		if err != nil {
			return err
		}
		s := r.p.Last()
		r.sample(at, n, lag, s)
		if n == r.o.Orders && lag == 0 && s.Booked >= int64(r.o.Orders) {
			if r.res.Elapsed == 0 {
				r.res.Elapsed = at
			}
			if at >= r.o.Watch {
				return nil
			}
		}
	}
}

// groupLag is group's lag: the records written to what it consumes that it
// has not committed.
func groupLag(ctx context.Context, adm *kadm.Client, group string) (int64, error) {
	lags, err := adm.Lag(ctx, group)
	if err != nil {
		return 0, err
	}
	l := lags[group]
	if l.Error() != nil {
		return 0, fmt.Errorf("the group's lag: %w", l.Error())
	}
	return l.Lag.Total(), nil
}

// startAtEnd commits group's start at the topic's end: the mode's courier
// reads its own orders, none older.
func startAtEnd(ctx context.Context, adm *kadm.Client, group, topic string) error {
	end, err := brewkit.EndOffsets(ctx, adm, topic)
	if err != nil {
		return err
	}
	start := kadm.Offsets{}
	end.Each(func(o kadm.ListedOffset) { start.AddOffset(o.Topic, o.Partition, o.Offset, -1) })
	if _, err := adm.CommitOffsets(ctx, group, start); err != nil {
		return fmt.Errorf("starting group %s at the end of %s: %w", group, topic, err)
	}
	return nil
}

// padded is an order with a note that makes it as big as a real one with
// its items, address and comments.
type padded struct {
	brewkit.Event
	Note string `json:"note"`
}

// write writes the run's orders at o.Rate, a tenth of a second's worth at a
// time without waiting for the acknowledgements (the client pipelines
// them), and tells progress how many are acknowledged.
func write(ctx context.Context, cl *kgo.Client, o Options, run string, progress func(int)) (int, error) {
	rng := rand.New(rand.NewPCG(1, 0))
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 "
	note := make([]byte, o.Pad)
	chunk := max(1, o.Rate/10)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var acked atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	now := time.Now()
	for n := 0; n < o.Orders; {
		for end := min(o.Orders, n+chunk); n < end; n++ {
			ev := brewkit.NewOrder(rng, int64(n), now)
			ev.OrderID, ev.Seq, ev.Run = fmt.Sprintf("%s-%05d", run, n), int64(n), run
			for i := range note {
				note[i] = letters[rng.IntN(len(letters))] // random: no compression shrinks it
			}
			v, err := json.Marshal(padded{ev, string(note)})
			if err != nil {
				return int(acked.Load()), err
			}
			wg.Add(1)
			cl.Produce(ctx, &kgo.Record{Topic: o.Topic, Key: []byte(ev.OrderID), Value: v}, func(_ *kgo.Record, err error) {
				defer wg.Done()
				if err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
					return
				}
				progress(int(acked.Add(1)))
			})
		}
		if n < o.Orders {
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	wg.Wait()
	if first != nil {
		return int(acked.Load()), fmt.Errorf("writing orders to %s: %w", o.Topic, first)
	}
	return int(acked.Load()), ctx.Err()
}

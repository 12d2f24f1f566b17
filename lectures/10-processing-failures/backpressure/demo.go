package backpressure

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
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

func runMode(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, o Options, m Mode) (Result, error) {
	res := Result{Mode: m}
	run := o.Run + "-" + string(m)
	group := "brew.courier." + run
	if err := startAtEnd(ctx, adm, group, o.Topic); err != nil {
		return res, err
	}
	defer adm.DeleteGroup(context.WithoutCancel(ctx), group) //nolint:errcheck // a leftover demo group is harmless
	if err := o.Partner.Reset(ctx); err != nil {
		return res, err
	}
	if _, err := o.Partner.SetFaults(ctx, partner.Faults{Latency: partner.Duration(o.Latency)}); err != nil {
		return res, err
	}
	c := Courier{Topic: o.Topic, Group: group, Workers: o.Workers, CommitEvery: 500 * time.Millisecond, Drain: time.Second}
	if m == Bounded {
		c.Queue, c.Low = o.Queue, o.Low()
	}
	p, err := Start(ctx, cfg, o.Courier, c, o.PartnerAddr)
	if err != nil {
		return res, err
	}
	defer p.Wait(15 * time.Second)  //nolint:errcheck // an early return's stop
	defer p.Signal(syscall.SIGTERM) //nolint:errcheck
	if err := p.WaitAssigned(ctx, 30*time.Second); err != nil {
		return res, err
	}

	// A writer of the mode's own: both modes pay the same first writes
	// (metadata, the producer id).
	w, err := brewkit.NewClient(cfg)
	if err != nil {
		return res, err
	}
	defer w.Close()
	start := time.Now()
	var written struct {
		sync.Mutex
		n   int
		err error
	}
	go func() {
		_, err := write(ctx, w, o, run, func(n int) {
			written.Lock()
			written.n = max(written.n, n)
			written.Unlock()
		})
		written.Lock()
		written.err = err
		written.Unlock()
	}()
	writtenNow := func() (int, error) {
		written.Lock()
		defer written.Unlock()
		return written.n, written.err
	}
	slow := true
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(o.Watch + 2*time.Minute)
	for {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-p.Done():
			_, err := p.Wait(0)
			if err == nil {
				err = fmt.Errorf("the courier process ended")
			}
			return res, err
		case <-limit:
			return res, fmt.Errorf("not every order booked within %s", o.Watch+2*time.Minute)
		case <-tick.C:
		}
		at := time.Since(start)
		n, werr := writtenNow() // before the lag: what it counts is in the lag
		if werr != nil {
			return res, werr
		}
		if slow && n == o.Orders && at >= o.Slow {
			// The rush is over: the partner is fast again.
			if _, err := o.Partner.SetFaults(ctx, partner.Faults{}); err != nil {
				return res, err
			}
			slow = false
		}
		lags, err := adm.Lag(ctx, group)
		if err != nil {
			return res, err
		}
		l := lags[group]
		if l.Error() != nil {
			return res, fmt.Errorf("the group's lag: %w", l.Error())
		}
		lag := l.Lag.Total()
		res.MaxLag = max(res.MaxLag, lag)
		s := p.Last()
		// One point a second (a late tick fills the seconds it missed).
		for sec := int(at / time.Second); len(res.Timeline) < sec && len(res.Timeline) < int(o.Watch/time.Second); {
			pt := Point{Second: len(res.Timeline) + 1, Written: n, Lag: lag, Queue: s.Queue, RSS: s.RSS, Paused: s.Paused}
			res.Timeline = append(res.Timeline, pt)
			if o.Progress != nil {
				o.Progress(fmt.Sprintf("%-9s %3ds  written %6d  lag %6d  queue %6d  rss %4d MiB  booked %6d", m, pt.Second, n, lag, s.Queue, s.RSS>>20, s.Booked))
			}
		}
		if n == o.Orders && lag == 0 && s.Booked >= int64(o.Orders) && at >= o.Watch {
			if res.Elapsed == 0 {
				res.Elapsed = at
			}
			break
		}
		if n == o.Orders && lag == 0 && s.Booked >= int64(o.Orders) && res.Elapsed == 0 {
			res.Elapsed = at
		}
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return res, err
	}
	if _, err := p.Wait(15 * time.Second); err != nil {
		return res, err
	}
	st := p.Stopped()
	if st == nil {
		return res, fmt.Errorf("the courier process did not report its stop")
	}
	peak := p.Peak()
	res.MaxQueue, res.PeakRSS, res.Pauses, res.Revoked = peak.Queue, peak.PeakRSS, st.Pauses, st.Revoked

	log, err := o.Partner.Log(ctx)
	if err != nil {
		return res, err
	}
	times := map[string]int{}
	for _, b := range log.Bookings {
		if strings.HasPrefix(b.OrderID, run+"-") {
			times[b.OrderID]++
		}
	}
	res.Booked = len(times)
	for _, n := range times {
		if n > 1 {
			res.BookedTwice++
		}
	}
	return res, nil
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

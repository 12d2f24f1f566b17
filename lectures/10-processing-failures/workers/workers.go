// Package workers is concurrency inside one consumer. Booking an order takes
// the partner 20 ms, so one loop books 50 orders a second however many
// partitions it owns. Two ways to go faster without losing an order's event
// order:
//
//   - a goroutine per partition: each partition's records in order, the
//     partitions side by side; as fast as the consumer has partitions, and
//     the commit waits for the slowest partition of the poll;
//   - a worker per key hash: records of one key go to one worker, in order;
//     as many workers as you like, on one partition too. Records finish out
//     of offset order, so the commit is ordered: for each partition only the
//     offsets below its lowest unfinished record are committed.
//
// The table's last row is what to avoid: a goroutine per record is the
// fastest, and books an order's events in any order.
package workers

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/10-processing-failures/courier"
	"github.com/brew-course/kafka/lectures/10-processing-failures/ordered"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Mode is how the consumer spreads its work.
type Mode string

const (
	Plain     Mode = "plain"     // one loop, one record at a time
	Partition Mode = "partition" // a goroutine per partition of the poll
	Key       Mode = "key"       // a worker per key hash, ordered commits
	Record    Mode = "record"    // a goroutine per record: fast, and order is lost
)

// Modes are the table's rows, in order.
var Modes = []Mode{Plain, Partition, Key, Record}

// Options set up a run.
type Options struct {
	Topic   string
	Run     string
	Orders  int           // records written: events of Keys orders
	Keys    int           // distinct order ids
	Latency time.Duration // the partner's time per booking
	Workers int           // Key mode's workers
	Partner *partner.Client
}

// Defaults are the lecture's table: 600 events of 120 orders, 20 ms a
// booking, 16 workers.
var Defaults = Options{Topic: courier.Orders, Orders: 600, Keys: 120, Latency: 20 * time.Millisecond, Workers: 16}

// Row is one mode's run.
type Row struct {
	Mode        Mode
	Goroutines  int
	Records     int
	Elapsed     time.Duration
	PerSecond   float64
	Speedup     float64 // against Plain
	OutOfOrder  int     // events of an order booked before an earlier event of it
	Uncommitted int64   // the group's lag once the mode ended: 0, every booked record committed

	// Partition mode only: how many polls it booked from, and Critical, the
	// longest partition of each poll summed. A poll's goroutines wait for
	// its longest partition, so the mode books no faster than Critical
	// bookings one after another, and which partitions a poll brings is
	// whichever fetch responses had arrived.
	Polls, Critical int
}

// Table runs every mode on a batch of its own and returns the rows.
func Table(ctx context.Context, cfg brewkit.Config, o Options, progress func(string)) ([]Row, error) {
	var rows []Row
	for _, m := range Modes {
		if progress != nil {
			progress(fmt.Sprintf("%s: booking %d events of %d orders at %s each...", m, o.Orders, o.Keys, o.Latency))
		}
		r, err := Run(ctx, cfg, o, m)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", m, err)
		}
		r.Speedup = 1
		if len(rows) > 0 && rows[0].PerSecond > 0 {
			r.Speedup = r.PerSecond / rows[0].PerSecond
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// Run books a batch of its own in mode m and measures it.
func Run(ctx context.Context, cfg brewkit.Config, o Options, m Mode) (Row, error) {
	row := Row{Mode: m, Records: o.Orders, Goroutines: 1}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return row, err
	}
	defer cl.Close()
	if o.Topic == courier.Orders {
		if _, err := brewkit.EnsureTopics(ctx, adm, brewkit.Orders); err != nil {
			return row, err
		}
	}
	b := courier.Batch{Topic: o.Topic, Run: o.Run + "-" + string(m), Orders: o.Orders, Keys: o.Keys}
	if err := b.Write(ctx, cl); err != nil {
		return row, err
	}
	if err := o.Partner.Reset(ctx); err != nil {
		return row, err
	}
	if _, err := o.Partner.SetFaults(ctx, partner.Faults{Latency: partner.Duration(o.Latency)}); err != nil {
		return row, err
	}
	book := func(ctx context.Context, r *kgo.Record) error { return bookEvent(ctx, o.Partner, r) }
	consumer, err := brewkit.NewClient(cfg, kgo.ConsumerGroup(b.Group()), kgo.ConsumeTopics(o.Topic),
		kgo.DisableAutoCommit(), kgo.KeepRetryableFetchErrors())
	if err != nil {
		return row, err
	}
	defer consumer.Close()

	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	start := time.Now()
	switch m {
	case Plain:
		err = plain(ctx, consumer, o.Orders, book)
	case Partition:
		var sh pollShape
		sh, err = perPartition(ctx, consumer, o.Orders, book)
		row.Goroutines, row.Polls, row.Critical = len(sh.partitions), sh.polls, sh.critical
	case Key:
		row.Goroutines = o.Workers
		err = perKey(ctx, consumer, o.Orders, o.Workers, book)
	case Record:
		row.Goroutines, err = perRecord(ctx, consumer, o.Orders, book)
	}
	row.Elapsed = time.Since(start)
	if err != nil {
		return row, err
	}
	row.PerSecond = float64(o.Orders) / row.Elapsed.Seconds()

	l, err := o.Partner.Log(ctx)
	if err != nil {
		return row, err
	}
	row.OutOfOrder = outOfOrder(l)
	lags, err := adm.Lag(ctx, b.Group())
	if err != nil {
		return row, err
	}
	row.Uncommitted = lags[b.Group()].Lag.Total()
	return row, nil
}

// outOfOrder counts bookings of an order's event made after a later event of
// the same order was booked.
func outOfOrder(l partner.Log) int {
	last := map[string]int{}
	n := 0
	for _, b := range l.Bookings {
		id, seq, ok := strings.Cut(b.Key, "#")
		if !ok {
			continue
		}
		s, _ := strconv.Atoi(seq)
		if prev, seen := last[id]; seen && s < prev {
			n++
			continue
		}
		last[id] = s
	}
	return n
}

type bookFunc func(context.Context, *kgo.Record) error

// bookEvent books r's event. One booking per event: the event's number in
// the idempotency key lets the booking log tell the order the events were
// booked in. The key also makes a call that got no answer safe to make
// again (the partner books a key once and answers a repeat with the first
// booking), and record mode needs that: it sends hundreds of calls at once,
// and on a busy machine some of them wait out the client's 2 s.
func bookEvent(ctx context.Context, p *partner.Client, r *kgo.Record) error {
	ev, err := courier.Decode(r)
	if err != nil {
		return err
	}
	req := partner.Request{OrderID: ev.OrderID, ShopID: ev.ShopID}
	key := ev.OrderID + "#" + strconv.FormatInt(ev.Seq, 10)
	for attempt := 1; ; attempt++ {
		_, err = p.Book(ctx, req, key)
		if err == nil || attempt == 3 || !partner.Retriable(err) {
			return err
		}
	}
}

// plain is the loop of lecture 06: poll, book each record, commit.
func plain(ctx context.Context, cl *kgo.Client, want int, book bookFunc) error {
	var fc brewkit.FetchCheck
	for done := 0; done < want; {
		fs, err := fc.Poll(ctx, cl, 0)
		if err != nil {
			return err
		}
		for it := fs.RecordIter(); !it.Done(); {
			if err := book(ctx, it.Next()); err != nil {
				return err
			}
			done++
		}
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			return fmt.Errorf("committing: %w", err)
		}
	}
	return nil
}

// pollShape is what perPartition's polls brought.
type pollShape struct {
	partitions map[int32]bool // every partition booked from: a goroutine each
	polls      int
	critical   int // the longest partition of each poll, summed
}

// perPartition books each partition of a poll in a goroutine of its own and
// commits once all of them are done.
func perPartition(ctx context.Context, cl *kgo.Client, want int, book bookFunc) (pollShape, error) {
	var fc brewkit.FetchCheck
	sh := pollShape{partitions: map[int32]bool{}}
	for done := 0; done < want; {
		fs, err := fc.Poll(ctx, cl, 0)
		if err != nil {
			return sh, err
		}
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		longest := 0
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if len(p.Records) == 0 {
				return
			}
			sh.partitions[p.Partition] = true
			done += len(p.Records)
			longest = max(longest, len(p.Records))
			wg.Go(func() {
				for _, r := range p.Records {
					if err := book(ctx, r); err != nil {
						errs <- err
						return
					}
				}
			})
		})
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return sh, err
		}
		if longest > 0 {
			sh.polls++
			sh.critical += longest
		}
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			return sh, fmt.Errorf("committing: %w", err)
		}
	}
	return sh, nil
}

// perRecord books every record of a poll in a goroutine of its own and
// commits once all of them are done: nothing keeps one order's events in
// order.
func perRecord(ctx context.Context, cl *kgo.Client, want int, book bookFunc) (int, error) {
	var fc brewkit.FetchCheck
	most := 0
	for done := 0; done < want; {
		fs, err := fc.Poll(ctx, cl, 0)
		if err != nil {
			return most, err
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var first error
		n := 0
		for it := fs.RecordIter(); !it.Done(); {
			r := it.Next()
			n++
			wg.Go(func() {
				if err := book(ctx, r); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
				}
			})
		}
		done += n
		most = max(most, n)
		wg.Wait()
		if first != nil {
			return most, first
		}
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			return most, fmt.Errorf("committing: %w", err)
		}
	}
	return most, nil
}

// perKey hands each record to the worker its key hashes to; a worker books
// its records in the order it gets them, so one key's events stay in order.
// Every 100 ms, and at the end, it commits each partition up to its lowest
// unfinished record.
func perKey(ctx context.Context, cl *kgo.Client, want, workers int, book bookFunc) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := startKeyWorkers(ctx, cancel, workers, book)

	var fc brewkit.FetchCheck
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for taken := 0; taken < want; {
		pctx, pcancel := context.WithTimeout(ctx, 100*time.Millisecond)
		fs, err := fc.Poll(pctx, cl, 0)
		pcancel()
		if err != nil && ctx.Err() == nil {
			w.stop(ctx)
			return err
		}
		for it := fs.RecordIter(); !it.Done(); {
			r := it.Next()
			w.marks.Take(r)
			if !w.hand(ctx, r) {
				return w.stop(ctx)
			}
			taken++
		}
		select {
		case <-tick.C:
			ordered.Commit(ctx, cl, w.marks, nil) //nolint:errcheck // the final commit below reports
		default:
		}
	}
	if err := w.stop(ctx); err != nil {
		return err
	}
	return ordered.Commit(ctx, cl, w.marks, nil)
}

// keyWorkers are perKey's workers, an inbox each, and the marks of what
// they have finished.
type keyWorkers struct {
	inbox []chan *kgo.Record
	wg    sync.WaitGroup
	marks *ordered.Marks
}

// startKeyWorkers starts n workers. Each books what its inbox gets, in
// order, and marks it finished; a booking that fails cancels ctx with the
// failure as its cause.
func startKeyWorkers(ctx context.Context, cancel context.CancelCauseFunc, n int, book bookFunc) *keyWorkers {
	w := &keyWorkers{inbox: make([]chan *kgo.Record, n), marks: ordered.New()}
	for i := range w.inbox {
		w.inbox[i] = make(chan *kgo.Record, 64)
		w.wg.Go(func() {
			for r := range w.inbox[i] {
				if err := book(ctx, r); err != nil {
					cancel(err)
					return
				}
				w.marks.Finish(r)
			}
		})
	}
	return w
}

// hand gives r to the worker its key hashes to. It reports false when ctx
// ended first.
func (w *keyWorkers) hand(ctx context.Context, r *kgo.Record) bool {
	h := fnv.New32a()
	h.Write(r.Key)
	select {
	case w.inbox[h.Sum32()%uint32(len(w.inbox))] <- r:
		return true
	case <-ctx.Done():
		return false
	}
}

// stop closes the inboxes and waits for the workers to book what they
// hold; it returns why ctx was canceled, if it was.
func (w *keyWorkers) stop(ctx context.Context) error {
	for _, c := range w.inbox {
		close(c)
	}
	w.wg.Wait()
	return context.Cause(ctx)
}

// Print writes the table as the README shows it.
func Print(w io.Writer, o Options, rows []Row) {
	fmt.Fprintf(w, "%d events of %d orders, the partner takes %s a booking\n\n", o.Orders, o.Keys, o.Latency)
	t := brewkit.NewTable(w, "MODE", "GOROUTINES", "ELAPSED", "BOOKINGS/S", "SPEEDUP", "OUT OF ORDER", "UNCOMMITTED")
	for _, r := range rows {
		t.Row(r.Mode, r.Goroutines, r.Elapsed.Round(10*time.Millisecond), fmt.Sprintf("%.0f", r.PerSecond), fmt.Sprintf("%.1fx", r.Speedup), r.OutOfOrder, r.Uncommitted)
	}
	t.Flush()
}

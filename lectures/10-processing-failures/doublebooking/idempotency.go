// Package idempotency shows why a booking call needs an idempotency key. The
// partner sometimes stores a booking and then does not answer; the courier
// times out, cannot know whether the booking was made, and retries. Without
// a key the retry is a second booking; with the order id as the key the
// partner answers the retry with the first booking.
package doublebooking

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/10-processing-failures/courier"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Options set up a run.
type Options struct {
	Topic   string
	Run     string
	Orders  int
	Timeout time.Duration // the courier's bound on one booking call
	Share   float64       // of new bookings the partner stores and does not answer
	Partner *partner.Client
}

// Defaults are the lecture's run.
var Defaults = Options{Topic: courier.Orders, Orders: 40, Timeout: 300 * time.Millisecond, Share: 0.2}

// Row is one run: with or without the key.
type Row struct {
	Key         string // "none" or "order id"
	Orders      int
	Calls       int // booking calls the courier made
	TimedOut    int // calls that got no answer
	Bookings    int // bookings the partner made
	BookedTwice int // orders booked more than once
}

// Run books the same kind of batch twice, without and with the key, against
// a partner that leaves Share of its bookings unanswered.
func Run(ctx context.Context, cfg brewkit.Config, o Options) ([]Row, error) {
	var rows []Row
	for _, keyed := range []bool{false, true} {
		r, err := runOne(ctx, cfg, o, keyed)
		if err != nil {
			return rows, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func runOne(ctx context.Context, cfg brewkit.Config, o Options, keyed bool) (Row, error) {
	row := Row{Key: "none", Orders: o.Orders}
	run := o.Run + "-nokey"
	if keyed {
		row.Key, run = "order id", o.Run+"-key"
	}
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
	b := courier.Batch{Topic: o.Topic, Run: run, Orders: o.Orders}
	if err := b.Write(ctx, cl); err != nil {
		return row, err
	}
	if err := o.Partner.Reset(ctx); err != nil {
		return row, err
	}
	if _, err := o.Partner.SetFaults(ctx, partner.Faults{TimeoutAfterBooking: o.Share, Hang: partner.Duration(3 * o.Timeout), Seed: 10}); err != nil {
		return row, err
	}
	p := *o.Partner
	p.Timeout = o.Timeout
	booker := courier.Booker{Partner: &p, Idempotent: keyed}

	consumer, err := brewkit.NewClient(cfg, kgo.ConsumerGroup(b.Group()), kgo.ConsumeTopics(o.Topic), kgo.KeepRetryableFetchErrors())
	if err != nil {
		return row, err
	}
	defer consumer.Close()
	var fc brewkit.FetchCheck
	seen := 0
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for seen < o.Orders {
		fs, err := fc.Poll(ctx, consumer, 0)
		if err != nil {
			return row, err
		}
		if ctx.Err() != nil {
			return row, fmt.Errorf("booked %d of %d orders in 60s: %w", seen, o.Orders, ctx.Err())
		}
		for it := fs.RecordIter(); !it.Done(); {
			r := it.Next()
			for attempt := 1; ; attempt++ {
				row.Calls++
				err := booker.Book(ctx, r)
				if err == nil {
					break
				}
				var pe *partner.Error
				if errors.As(err, &pe) && pe.Status == 0 {
					row.TimedOut++
				}
				if !partner.Retriable(err) || attempt == 10 {
					return row, fmt.Errorf("booking order %s: %w", r.Key, err)
				}
			}
			seen++
		}
	}
	l, err := o.Partner.Log(ctx)
	if err != nil {
		return row, err
	}
	row.Bookings, row.BookedTwice = len(l.Bookings), len(l.Doubles())
	return row, nil
}

// Print writes the rows as the README shows them.
func Print(w io.Writer, o Options, rows []Row) {
	fmt.Fprintf(w, "%d orders; the partner stores %.0f%% of new bookings and does not answer; the courier gives up after %s and retries\n\n",
		o.Orders, o.Share*100, o.Timeout)
	t := brewkit.NewTable(w, "IDEMPOTENCY KEY", "CALLS", "TIMED OUT", "BOOKINGS", "BOOKED TWICE")
	for _, r := range rows {
		t.Row(r.Key, r.Calls, r.TimedOut, r.Bookings, r.BookedTwice)
	}
	t.Flush()
}

package debezium

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/cdc"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
)

// This file is the harness around the connector: order-service writing
// its orders beside the demo, and the tally of what reached Kafka. The
// connector's registration, the worker's kill and the reads are in
// debezium.go.

// say tells progress, when the demo asked for it.
func (o Options) say(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// orders is order-service writing the demo's orders into its outbox.
type orders struct {
	committed chan int // each order's number once its transaction committed; closed after the last
	done      chan ordersDone
}

type ordersDone struct {
	written    []cdc.Written
	beforeLast pglogrepl.LSN // where the WAL ended before the last order
	err        error
}

// startOrders writes o.Orders orders at o.Every in the background, on a
// connection of order-service's own: all but the last, then the WAL's
// position (on p), then the last one.
func startOrders(ctx context.Context, p *pgxpool.Pool, o Options) (*orders, error) {
	app, err := db.ConnectIn(ctx, o.Schema)
	if err != nil {
		return nil, err
	}
	w := &orders{committed: make(chan int, o.Orders), done: make(chan ordersDone, 1)}
	go func() {
		defer app.Close()
		defer close(w.committed) // a kill waiting for an order that never comes
		ws := cdc.Writes{Schema: o.Schema, Run: o.Run, Seed: 11, To: o.Orders - 1, Every: o.Every,
			Written: func(x cdc.Written) { w.committed <- x.N }}
		var d ordersDone
		d.written, d.err = cdc.Write(ctx, app, ws)
		if d.err == nil {
			var lsn string
			if lsn, d.err = cdc.CurrentLSN(ctx, p); d.err == nil {
				d.beforeLast, d.err = pglogrepl.ParseLSN(lsn)
			}
		}
		if d.err == nil {
			ws.From, ws.To = o.Orders-1, o.Orders
			var last []cdc.Written
			last, d.err = cdc.Write(ctx, app, ws)
			d.written = append(d.written, last...)
		}
		w.done <- d
	}()
	return w, nil
}

// wait waits for every order written.
func (w *orders) wait() ([]cdc.Written, pglogrepl.LSN, error) {
	d := <-w.done
	return d.written, d.beforeLast, d.err
}

// tally counts what reached Kafka against what was written: events,
// distinct orders, lost ones and duplicates, the first order's record, and
// how soon after the kill (killedAt, zero when none) an order committed
// after it arrived.
func (res *Result) tally(written []cdc.Written, events []cdc.Arrived, killedAt time.Time) {
	if !killedAt.IsZero() {
		// The first record of an order committed after the kill: only the
		// restarted worker can have sent it.
		after := map[string]bool{}
		for _, w := range written {
			if w.Committed.After(killedAt) {
				after[w.OrderID] = true
			}
		}
		for _, e := range events {
			if after[e.OrderID] {
				res.Delivering = e.At.Sub(killedAt)
				break
			}
		}
	}
	for _, e := range events {
		if e.OrderID == written[0].OrderID {
			res.Sample = recordOf(e.Record)
			res.SampleRow = written[0]
			break
		}
	}
	res.Events = len(events)
	count := drill.Count(cdc.Gots(events))
	res.Unique = len(count)
	for _, w := range written {
		if count[w.OrderID] == 0 {
			res.Lost = append(res.Lost, w.OrderID)
		}
	}
	for _, n := range count {
		res.Duplicates += n - 1
	}
}

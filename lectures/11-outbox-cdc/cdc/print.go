package cdc

import (
	"fmt"
	"io"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Print writes r as the README shows it.
func Print(w io.Writer, o Options, r Result) {
	fmt.Fprintf(w, "cdc: %d orders, each with its outbox row in one transaction, read from the WAL into %s\n", r.Orders, o.Topic)
	fmt.Fprintf(w, "through slot %s (%s, publication %s on %s.outbox); the reader killed -9 %d times (seed %d)\n\n",
		o.Slot, Plugin, o.Publication, o.Schema, r.Kills, r.Seed)
	if len(r.Killed) > 0 {
		t := brewkit.NewTable(w, "KILLED AT", "WHERE")
		for _, k := range r.Killed {
			t.Row(k.OrderID, SaysStage(k.Stage))
		}
		t.Flush()
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "the slot while no reader runs and order-service writes %d more orders:\n", r.Down)
	t := brewkit.NewTable(w, "ORDERS WRITTEN", "SLOT LAG", "WAL STATUS")
	for _, l := range append([]LagRow{r.LagStopped}, r.LagDown...) {
		t.Row(l.Written, Bytes(l.Lag), l.WALStatus)
	}
	t.Flush()
	fmt.Fprintf(w, "the reader back: caught up in %s, slot lag %d bytes\n\n", r.CatchUp.Round(time.Millisecond), r.LagAfter)
	fmt.Fprintf(w, "pg_drop_replication_slot('%s') while the reader streams: %s\n", o.Slot, r.DropWhileActive)
	if r.DroppedAfter {
		fmt.Fprintln(w, "after the reader stopped: dropped")
	} else {
		fmt.Fprintln(w, "after the reader stopped: STILL THERE")
	}
	fmt.Fprintln(w)
	t = brewkit.NewTable(w, "ORDERS", "EVENTS", "LOST", "DUPLICATES", "OUT OF ORDER")
	t.Row(r.Written, r.Events, len(r.Lost), r.Duplicates, r.OutOfOrder)
	t.Flush()
	if len(r.Lost) > 0 {
		fmt.Fprintf(w, "lost: %v\n", r.Lost)
	}
}

package dualwrite

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Print writes r as the README shows it.
func Print(w io.Writer, o Options, r Result) {
	fmt.Fprintf(w, "dual write: %d orders in each order of the two writes to %s and PostgreSQL;\n", r.Orders, o.Topic)
	fmt.Fprintf(w, "the writer killed -9 between its two writes %d times (seed %d)\n\n", r.Kills, r.Seed)
	t := brewkit.NewTable(w, "WRITES", "ROWS", "EVENTS", "ROW, NO EVENT", "EVENT, NO ROW")
	for _, row := range r.Rows {
		t.Row(row.Mode.Says(), row.Rows, row.Events, row.RowNoEvent, row.EventNoRow)
	}
	t.Flush()
	if len(r.Rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	killed := make([]string, len(r.Rows[0].Killed))
	for i, k := range r.Rows[0].Killed {
		killed[i] = brewkit.OrderID(int64(k))
	}
	fmt.Fprintf(w, "killed at %s, in each order of writes\n", strings.Join(killed, ", "))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "where a kill at a random moment lands between the two writes (the writer that was not killed):")
	t = brewkit.NewTable(w, "WRITES", "PER ORDER", "BETWEEN", "SHARE")
	for _, row := range r.Rows {
		n := time.Duration(max(row.Timing.Orders, 1))
		t.Row(row.Mode.Says(), (row.Timing.Total / n).Round(10*time.Microsecond), (row.Timing.Window / n).Round(10*time.Microsecond),
			fmt.Sprintf("%.0f%%", 100*row.Timing.Share()))
	}
	t.Flush()
	fmt.Fprintln(w)
	for _, row := range r.Rows {
		if row.RowNoEvent > 0 {
			fmt.Fprintf(w, "%s: %d orders kitchen-service never hears of\n", row.Mode.Says(), row.RowNoEvent)
		}
		if row.EventNoRow > 0 {
			fmt.Fprintf(w, "%s: %d events of orders that do not exist\n", row.Mode.Says(), row.EventNoRow)
		}
	}
}

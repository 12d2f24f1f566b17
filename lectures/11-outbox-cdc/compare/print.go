package compare

import (
	"fmt"
	"io"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Print writes r as the README shows it.
func Print(w io.Writer, o Options, r Result) {
	fmt.Fprintf(w, "compare: each producer drains a backlog of %d orders, then gets %d more at one every %s\n", r.Backlog, r.Steady, r.Every)
	for _, row := range r.Rows {
		fmt.Fprintf(w, "  %-9s %s\n", row.Producer, row.Producer.Says())
	}
	fmt.Fprintln(w)
	t := brewkit.NewTable(w, "PRODUCER", "EVENTS", "LOST", "EVENTS/S", "P50", "P99", "SCANS", "DELETES", "PG CPU", "RSS", "PROCESS")
	for _, row := range r.Rows {
		mem := "-"
		if row.RSS > 0 {
			mem = fmt.Sprintf("%d MB", row.RSS>>20)
		}
		t.Row(row.Producer, row.Unique, row.Lost, fmt.Sprintf("%.0f", row.PerSec), row.P50.Round(100*time.Microsecond), row.P99.Round(100*time.Microsecond),
			row.Scans, row.Deleted, row.PGCPU.Round(10*time.Millisecond), mem, row.Process)
	}
	t.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "EVENTS: orders with an event (of", r.Backlog+r.Steady, "written); SCANS: seq_scan + idx_scan of its outbox table;")
	fmt.Fprintln(w, "DELETES: outbox rows deleted; PG CPU: the PostgreSQL backends serving it; RSS: its process")
}

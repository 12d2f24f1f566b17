package shutdown

import (
	"fmt"
	"io"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Print writes the table as the README shows it.
func Print(w io.Writer, o Options, rows []Row) {
	fmt.Fprintf(w, "%d orders in %s, the partner takes %s a booking, %d workers, a queue of %d, a commit every %s, session timeout %s\n",
		o.Orders, o.Topic, o.Latency, o.Workers, o.Queue, o.CommitEvery, o.SessionTimeout)
	fmt.Fprintf(w, "the courier gets the signal after %d bookings; then the next instance reads on\n\n", o.StopAfter)
	t := brewkit.NewTable(w, "SIGNAL", "BOOKED", "EXIT AFTER", "COMMITTED", "NEXT ASSIGNED AFTER", "RE-READ", "BOOKED TWICE", "KEY REPLAYS", "LOST")
	for _, r := range rows {
		t.Row(r.Signal, r.Booked, r.ExitAfter.Round(time.Millisecond), r.Committed, r.NextAssigned.Round(10*time.Millisecond),
			r.Reread, r.BookedTwice, r.Replays, r.Lost)
	}
	t.Flush()
}

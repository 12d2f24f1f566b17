package naive

import (
	"fmt"
	"io"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Print writes r as the README shows it.
func Print(w io.Writer, o Options, r Result) {
	poison := "no poison"
	if o.Poison >= 0 {
		poison = "1 poison"
	}
	down := "the partner is up"
	if r.Outage > 0 {
		down = "the partner answers 503 for " + r.Outage.String()
	}
	fmt.Fprintf(w, "naive courier: %d orders in %s (%d partitions), %s; %s\n\n", r.Orders, o.Topic, r.Partitions, poison, down)
	if len(r.Crashes) > 0 {
		t := brewkit.NewTable(w, "CRASH", "PARTITION", "OFFSET", "COMMITTED")
		for i, c := range r.Crashes {
			t.Row(i+1, c.Partition, c.Offset, c.Committed)
		}
		t.Flush()
		fmt.Fprintf(w, "\nevery restart crashed on the same order: the committed offset never passes it\n")
		fmt.Fprintf(w, "orders booked again by the restarts: %d (what the crashed batch had booked)\n", r.BookedTwice)
		return
	}
	t := brewkit.NewTable(w, "PHASE", "SECONDS", "PARTNER CALLS", "BOOKED", "LAG", "STALLED")
	t.Row("down", int(r.Outage.Seconds()), r.CallsInOutage, r.BookedInOutage, r.LagInOutage,
		fmt.Sprintf("%d/%d", r.StalledPartitions, r.Partitions))
	t.Row("back", int(o.Watch.Seconds()), r.Calls()-r.CallsInOutage, r.Booked-r.BookedInOutage, r.Lag, "-")
	t.Flush()
	fmt.Fprintln(w)
	if r.StuckOn != "" {
		fmt.Fprintf(w, "stuck on partition %d, offset %d, try %d: %s\n", r.stuckPartition, r.stuckOffset, r.StuckAttempts, r.StuckError)
	}
	fmt.Fprintf(w, "the group: %d member, %d partitions revoked: it never noticed\n", r.Members, r.Revoked)
}

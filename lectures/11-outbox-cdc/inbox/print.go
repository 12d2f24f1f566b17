package inbox

import (
	"fmt"
	"io"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Print writes r as the README shows it.
func Print(w io.Writer, o Options, r Result) {
	fmt.Fprintf(w, "inbox: %d orders through the outbox to %s, %d events sent twice (relays killed after Kafka's ack);\n",
		r.Input.Rows, o.Outbox.Topic, r.Input.Duplicates)
	fmt.Fprintf(w, "kitchen-service killed -9 %d times in each run, between its database commit and its offset commit\n\n", o.Kills)
	t := brewkit.NewTable(w, "KITCHEN", "RECORDS READ", "REDELIVERED", "TICKETS", "COOKED TWICE", "NOT COOKED", "SKIPPED BY INBOX")
	for _, row := range r.Rows {
		skipped := fmt.Sprint(row.Skipped)
		if row.Mode != WithInbox {
			skipped = "-"
		}
		t.Row(row.Mode.Says(), row.Read, row.Redelivered, row.Tickets, row.CookedTwice, row.NotCooked, skipped)
	}
	t.Flush()
	fmt.Fprintln(w)
	for _, row := range r.Rows {
		switch row.Mode {
		case OffsetsOnly:
			fmt.Fprintf(w, "offsets only: tickets too many %d = the outbox's duplicates %d + redelivered after the kills %d\n",
				row.Tickets-row.Orders, r.Input.Duplicates, row.Redelivered)
		case WithInbox:
			fmt.Fprintf(w, "inbox: each of the %d orders cooked once; skipped %d repeats, their event ids already in the inbox\n",
				row.Orders, row.Skipped)
		}
	}
}

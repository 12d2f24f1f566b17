package outbox

import (
	"fmt"
	"io"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Print writes r as the README shows it.
func Print(w io.Writer, o Options, r Result) {
	fmt.Fprintf(w, "outbox: %d orders, each with its outbox row in one transaction; %d relays at once, batches of %d, to %s\n\n",
		r.Orders, r.Relays, r.Batch, o.Topic)
	t := brewkit.NewTable(w, "KILLED -9", "KILLS", "SENT AGAIN")
	for _, s := range append(append([]Stage{}, WriterStages...), RelayStages...) {
		kills, resent := 0, 0
		for _, k := range r.Kills {
			if k.Stage == s {
				kills++
				resent += k.Resent
			}
		}
		t.Row(s.Says(), kills, resent)
	}
	t.Flush()
	fmt.Fprintln(w)
	t = brewkit.NewTable(w, "ORDERS", "EVENTS", "LOST", "INVENTED", "DUPLICATES", "LEFT IN OUTBOX")
	t.Row(r.Rows, r.Events, r.Lost, r.Invented, r.Duplicates, r.Outbox)
	t.Flush()
	fmt.Fprintln(w)
	fmt.Fprintf(w, "the %d orders killed inside their transaction: no row, no outbox row, no event\n", r.Orders-r.Rows)
	resending := 0
	for _, k := range r.Kills {
		if k.Stage.Resends() {
			resending++
		}
	}
	fmt.Fprintf(w, "duplicates in Kafka: %d; sent again by the %d relays killed after Kafka's ack, before their DELETE committed: %d\n",
		r.Duplicates, resending, r.Resent)
	fmt.Fprintln(w)
	t = brewkit.NewTable(w, "RELAY", "SENT AND DELETED", "KILLED")
	for i, n := range r.SentBy {
		killed := 0
		for _, k := range r.Kills {
			if k.Relay == i+1 {
				killed++
			}
		}
		t.Row(i+1, n, killed)
	}
	t.Flush()
}

package failover

import (
	"fmt"
	"io"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Print writes the drill's summary the way the lecture's README shows it.
func (r Report) Print(w io.Writer) {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	fmt.Fprintf(w, "Failover drill on %s, partition %d\n", r.Topic, r.Partition)
	if r.Simulated {
		fmt.Fprintf(w, "(%s)\n", brewkit.SimulatedNote)
	}
	fmt.Fprintln(w)
	t := brewkit.NewTable(w, "STEP", "RESULT")
	t.Row("stopped leader", fmt.Sprintf("node %d (%s)", r.Stopped, r.Signal))
	t.Row("new leader elected", fmt.Sprintf("node %d after %s", r.NewLeader, ms(r.ElectedAfter)))
	t.Row("new leader serves writes", "after "+ms(r.ServingAfter))
	t.Row("ISR shrank", fmt.Sprintf("%v -> %v after %s", r.ISRBefore, r.ISRAfter, ms(r.ISRShrunkAfter)))
	if r.Second != 0 {
		t.Row("second node stopped", fmt.Sprintf("node %d", r.Second))
		t.Row("acks=all, one replica in sync", orOK(r.AcksAllErr))
		if r.AcksOneErr != "" {
			t.Row("acks=1, one replica in sync", r.AcksOneErr)
		} else {
			t.Row("acks=1, one replica in sync", fmt.Sprintf("written at offset %d", r.AcksOneOffset))
		}
	}
	t.Row("ISR full again", "after "+ms(r.ISRFullAfter))
	t.Row("slowest acknowledgement", fmt.Sprintf("%s (%d waited over 1s)", ms(r.MaxAck), r.SlowAcks))
	t.Flush()
	fmt.Fprintln(w)
	t = brewkit.NewTable(w, "ACKS=ALL ORDERS", "SENT", "ACKED", "FAILED", "READ", "LOST", "DUPLICATED")
	t.Row("count", r.Sent, r.Acked, r.Failed, r.Read, r.Lost, r.Duplicated)
	t.Flush()
}

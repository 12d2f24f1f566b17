package backpressure

import (
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

func mib(b int64) int64 { return b >> 20 }

// Print writes the results as the README shows them.
func Print(w io.Writer, o Options, rs []Result) {
	fmt.Fprintf(w, "rush hour: %d orders (a %d B note each) in %s to %s; the partner takes %s a booking until the last is in, then 0; %d workers book\n",
		o.Orders, o.Pad, time.Duration(float64(o.Orders)/float64(o.Rate)*float64(time.Second)).Round(100*time.Millisecond), o.Topic, o.Latency, o.Workers)
	fmt.Fprintf(w, "bounded: a queue of %d, fetching paused when it is full, resumed at %d; unbounded: polls as fast as it can\n\n", o.Queue, o.Low())
	t := brewkit.NewTable(w, "MODE", "SECOND", "WRITTEN", "LAG", "QUEUE", "RSS MiB", "FETCHING")
	for _, r := range rs {
		for _, p := range r.Timeline {
			fetching := "yes"
			if p.Paused {
				fetching = "paused"
			}
			t.Row(r.Mode, p.Second, p.Written, p.Lag, p.Queue, mib(p.RSS), fetching)
		}
	}
	t.Flush()
	fmt.Fprintln(w)
	t = brewkit.NewTable(w, "MODE", "MAX QUEUE", "MAX RSS MiB", "MAX LAG", "PAUSES", "REVOKED", "BOOKED", "BOOKED TWICE")
	for _, r := range rs {
		t.Row(r.Mode, r.MaxQueue, mib(r.PeakRSS), r.MaxLag, r.Pauses, r.Revoked, r.Booked, r.BookedTwice)
	}
	t.Flush()
	if len(rs) == 2 && rs[0].PeakRSS > 0 {
		fmt.Fprintf(w, "\nthe unbounded courier took %.1fx the memory of the bounded one\n", float64(rs[1].PeakRSS)/float64(rs[0].PeakRSS))
	}
	if runtime.GOOS != "linux" {
		fmt.Fprintln(w, "(RSS is read from /proc/self/status: Linux only, 0 here)")
	}
}

package firedrill

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Print writes the alert timeline: for each step and each alert it expects,
// the seconds from the fault to pending and to firing, and from the fix to
// resolved ("-": never).
func Print(w io.Writer, r *Report) {
	fmt.Fprintf(w, "healthy: %ss of traffic, no alert fired\n\n", secs(r.Healthy))
	// Rows after a step's first leave FIX TOOK empty: the table goes
	// through a buffer to drop the spaces that would pad it.
	var tb bytes.Buffer
	t := brewkit.NewTable(&tb, "STEP", "ALERT", "PENDING", "FIRING", "RESOLVED", "FIX TOOK")
	for _, s := range r.Steps {
		for i, tm := range s.Timings {
			step, took := "", ""
			if i == 0 {
				step, took = s.Step.Name, secs(s.FixedIn)+"s"
			}
			t.Row(step, shortName(tm.Expect), mark(tm.Pending), mark(tm.Firing), mark(tm.Resolved), took)
		}
	}
	t.Flush() //nolint:errcheck // a buffer
	for _, l := range strings.Split(strings.TrimSuffix(tb.String(), "\n"), "\n") {
		fmt.Fprintln(w, strings.TrimRight(l, " "))
	}
	fmt.Fprintln(w, "\nPENDING and FIRING: seconds from the fault; RESOLVED: seconds from the fix")
	for _, s := range r.Steps {
		if len(s.Unexpected) > 0 {
			fmt.Fprintf(w, "step %s also fired: %s\n", s.Step.Name, strings.Join(s.Unexpected, ", "))
		}
	}
	fmt.Fprintf(w, "orders placed: %d, failed: %d, cooked: %d\n", r.Placed, r.Failed, r.Cooked)
	fmt.Fprintln(w, "(a write that timed out may still have reached the log: the kitchen cooks it too)")
}

// shortName is the alert with the labels a reader needs: the node, not the
// drill's fresh group name.
func shortName(e Expect) string {
	if n, ok := e.Labels["node"]; ok {
		return e.Alert + "{node=" + n + "}"
	}
	return e.Alert
}

func mark(d interface{ Seconds() float64 }) string {
	if d.Seconds() == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", d.Seconds())
}

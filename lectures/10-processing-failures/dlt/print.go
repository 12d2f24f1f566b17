package dlt

import (
	"fmt"
	"io"
	"strings"

	"github.com/brew-course/kafka/lectures/10-processing-failures/retrytopics"
	"github.com/brew-course/kafka/pkg/brewkit"
)

const clock = "15:04:05.000"

// Print writes the inspection as the README shows it: per error how many,
// the oldest and the newest, then the oldest of each with its headers.
func (in Inspection) Print(w io.Writer) {
	if in.Run == All {
		fmt.Fprintf(w, "%s, all runs: %d dead letters\n", in.Topic, in.Total)
	} else {
		fmt.Fprintf(w, "%s, all runs: %d dead letters; the run %s: %d (-run all shows every run's)\n", in.Topic, in.Total, in.Run, len(in.Letters))
	}
	if len(in.Letters) == 0 {
		return
	}
	fmt.Fprintln(w)
	t := brewkit.NewTable(w, "ERROR", "KIND", "COUNT", "OLDEST", "NEWEST")
	for _, g := range in.Groups {
		t.Row(g.Error, g.Kind, g.Count, g.Oldest.Format(clock), g.Newest.Format(clock))
	}
	t.Flush() //nolint:errcheck // printing
	for _, g := range in.Groups {
		l := g.Example
		fmt.Fprintf(w, "\nthe oldest: %s/%d@%d, key %s, dead-lettered at %s\n", in.Topic, l.Partition, l.Offset, l.Key, l.At.Format(clock))
		for _, h := range l.Headers {
			v := string(h.Value)
			if h.Key == retrytopics.HeaderFirstFailure && !l.FirstFailure.IsZero() {
				v = l.FirstFailure.Local().Format(clock) // RFC 3339 UTC in the record
			}
			fmt.Fprintf(w, "  %-20s%s\n", h.Key, v)
		}
	}
}

// Print writes the replay as the README shows it.
func (r ReplayResult) Print(w io.Writer) {
	sel := "error kind " + r.Replay.Kind
	if r.Replay.Error != "" {
		sel += fmt.Sprintf(", error containing %q", r.Replay.Error)
	}
	fmt.Fprintf(w, "replay: %d of the run's %d dead letters (%s) to %s", r.Replayed, r.Letters, sel, r.Replay.Topics.Orders)
	switch {
	case r.Replay.Again:
		fmt.Fprintf(w, ", again: -again ignores what group %s had replayed\n", r.Group)
	case r.Before > 0:
		fmt.Fprintf(w, "; group %s had replayed %d of them (-again replays them anyway)\n", r.Group, r.Before)
	default:
		fmt.Fprintf(w, "; group %s committed past them\n", r.Group)
	}
	if r.BookGroup != "" {
		booked := len(r.Stats.Bookings)
		fmt.Fprintf(w, "the courier of group %s booked them: %d new bookings, %d answered \"booked before\" (the idempotency key)\n",
			r.BookGroup, r.New, booked-r.New)
		if n := len(r.Stats.Dead); n > 0 {
			fmt.Fprintf(w, "dead-lettered again: %d\n", n)
		}
	} else if r.Replayed == 0 {
		fmt.Fprintln(w, "nothing to book")
	}
	once := 0
	for _, n := range r.Times {
		if n == 1 {
			once++
		}
	}
	fmt.Fprintf(w, "the partner's log: %d of the %d orders booked once, doubles %d, not booked %d\n",
		once, len(r.OrderIDs), len(r.Doubles), len(r.OrderIDs)-len(r.Times))
	if len(r.Unbooked) > 0 {
		fmt.Fprintf(w, "not booked (retriable): %s\n", strings.Join(r.Unbooked, " "))
	}
}

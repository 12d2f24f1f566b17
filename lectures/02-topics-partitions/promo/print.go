package promo

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Print writes one look as tables: partitions, then consumers.
func (v View) Print(w io.Writer, c Config) {
	phase := "orders coming in"
	if !v.Producing {
		phase = "promo over, working off the lag"
	}
	fmt.Fprintf(w, "%d partition(s), %d consumers, %.0f orders/min (%.0f/s), each consumer %.0f/s   %s  %s\n\n",
		v.Partitions, len(v.Consumers), c.PerMinute, c.PerMinute/60, c.Capacity(), v.Elapsed.Round(time.Second), phase)
	t := brewkit.NewTable(w, "PART", "IN/S", "PRODUCED", "PROCESSED", "LAG")
	for _, p := range v.Parts {
		t.Row(p.ID, fmt.Sprintf("%.0f", p.Rate), p.Produced, p.Done, p.Lag)
	}
	t.Flush()
	fmt.Fprintln(w)
	t = brewkit.NewTable(w, "CONSUMER", "PARTITIONS", "PROCESSED", "RATE/S", "STATE")
	// Busy consumers first: which member gets a partition is the group's choice.
	cons := slices.Clone(v.Consumers)
	slices.SortStableFunc(cons, func(a, b Consumer) int { return cmp.Compare(len(b.Partitions), len(a.Partitions)) })
	for _, cs := range cons {
		state := "busy"
		if len(cs.Partitions) == 0 {
			state = "idle: no partition for it"
		}
		t.Row(cs.ID, ids(cs.Partitions), cs.Processed, fmt.Sprintf("%.0f", cs.Rate), state)
	}
	t.Flush()
}

// Line is one look on one line, for piped output.
func (v View) Line() string {
	var busy int
	var rate float64
	for _, cs := range v.Consumers {
		if len(cs.Partitions) > 0 {
			busy++
		}
		rate += cs.Rate
	}
	return fmt.Sprintf("%d partition(s) %5s  lag %6d  processed/s %4.0f  busy consumers %d of %d\n",
		v.Partitions, v.Elapsed.Round(time.Second), v.Lag(), rate, busy, len(v.Consumers))
}

// PrintSummary compares finished scenarios.
func PrintSummary(w io.Writer, rs []Result) {
	t := brewkit.NewTable(w, "PARTITIONS", "CONSUMERS", "IDLE", "PRODUCED", "MAX LAG", "DRAINED IN")
	for _, r := range rs {
		t.Row(r.Partitions, len(r.Consumers), r.Idle, r.Produced, r.MaxLag, r.Drain.Round(100*time.Millisecond))
	}
	t.Flush()
	if len(rs) >= 2 && rs[len(rs)-1].Drain > 0 {
		first, last := rs[0], rs[len(rs)-1]
		fmt.Fprintf(w, "\n%d partitions drained %.1fx faster than %d.\n",
			last.Partitions, first.Drain.Seconds()/last.Drain.Seconds(), first.Partitions)
	}
}

func ids(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return "[" + strings.Join(s, " ") + "]"
}

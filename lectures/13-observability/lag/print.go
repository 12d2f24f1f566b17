package lag

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Print writes the report as `make lag` shows it: one row per group and
// partition, then one line per group, then what a reader must know.
func Print(w io.Writer, r Report) {
	rows := 0
	for _, g := range r.Groups {
		rows += len(g.Partitions)
	}
	if rows > 0 {
		t := brewkit.NewTable(w, "GROUP", "TOPIC", "PARTITION", "COMMITTED", "END", "LAG", "TIME-LAG")
		for _, g := range r.Groups {
			for _, p := range g.Partitions {
				t.Row(g.Name, p.Topic, p.Partition, offset(p.Committed, "-"), offset(p.End, "?"), offset(p.Lag, "-"), timeLag(p))
			}
		}
		t.Flush() //nolint:errcheck // stdout
		fmt.Fprintln(w)
	}
	if len(r.Groups) == 0 {
		fmt.Fprintln(w, "no consumer or share group to measure")
	}
	for _, g := range r.Groups {
		fmt.Fprintln(w, Summary(g))
	}
	for _, g := range r.Groups {
		for _, p := range g.Partitions {
			switch {
			case p.Err != nil:
				fmt.Fprintf(w, "%s %s/%d: %v\n", g.Name, p.Topic, p.Partition, p.Err)
			case p.Note != "":
				fmt.Fprintf(w, "%s %s/%d: %s\n", g.Name, p.Topic, p.Partition, p.Note)
			}
		}
	}
	for _, s := range r.Warnings {
		fmt.Fprintln(w, "warning:", s)
	}
}

// Summary is a group's line: what it is, its state and members, its lag in
// records and the age of its oldest unprocessed record.
func Summary(g Group) string {
	var b strings.Builder
	b.WriteString(g.Name)
	switch {
	case g.Kind == Share:
		b.WriteString(" (share group)")
	case g.Type == "consumer":
		b.WriteString(" (consumer group, KIP-848 protocol)")
	case g.Type == "classic":
		b.WriteString(" (consumer group, classic protocol)")
	}
	if g.Err != nil {
		fmt.Fprintf(&b, ": not measured: %v", g.Err)
		return b.String()
	}
	fmt.Fprintf(&b, ": %s, %d %s", g.State, g.Members, plural(g.Members, "member", "members"))
	switch {
	case len(g.Partitions) == 0:
		b.WriteString(", no committed offsets")
	case g.Lag() == 0:
		b.WriteString(", lag 0")
	default:
		fmt.Fprintf(&b, ", lag %d %s, oldest unprocessed %s", g.Lag(), plural(int(g.Lag()), "record", "records"), Age(g.MaxTimeLag()))
	}
	return b.String()
}

// Age is a time lag for people: seconds with a tenth under 10 s, whole
// seconds above; "?" when unknown (negative).
func Age(d time.Duration) string {
	switch {
	case d < 0:
		return "?"
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

func timeLag(p Partition) string {
	if p.Lag < 0 {
		return "-"
	}
	return Age(p.TimeLag)
}

func offset(n int64, unknown string) string {
	if n < 0 {
		return unknown
	}
	return strconv.FormatInt(n, 10)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

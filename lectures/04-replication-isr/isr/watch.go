package isr

import (
	"bytes"
	"fmt"
	"strings"
	"time"
)

// Highlight is how long a changed partition stays highlighted on a terminal.
const Highlight = 5 * time.Second

// Watch follows successive snapshots of a topic and remembers, per partition,
// the last change and when it happened.
type Watch struct {
	prev    *Topic
	changed map[int32]time.Time
	notes   map[int32]string
}

// Observe records snapshot t taken at time at and returns what changed since
// the previous one.
func (w *Watch) Observe(t Topic, at time.Time) []Change {
	if w.notes == nil {
		w.changed, w.notes = map[int32]time.Time{}, map[int32]string{}
	}
	var changes []Change
	if w.prev != nil {
		changes = Changes(*w.prev, t)
	}
	byPart := map[int32][]string{}
	for _, c := range changes {
		if c.Field == "epoch" {
			continue // an epoch moves with its leader; the leader change says it
		}
		byPart[c.Partition] = append(byPart[c.Partition], fmt.Sprintf("%s %s->%s", c.Field, c.From, c.To))
	}
	for p, parts := range byPart {
		w.changed[p] = at
		w.notes[p] = at.Format("15:04:05") + " " + strings.Join(parts, ", ")
	}
	w.prev = &t
	return changes
}

// Frame renders the topic with each partition's last change; on a terminal,
// partitions changed within Highlight are shown in bold yellow.
func (w *Watch) Frame(t Topic, at time.Time, color bool) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "watch-isr  %s  (Ctrl-C to stop; make kill-broker N=2 in another terminal)\n\n", at.Format("15:04:05"))
	t.Print(&b, w.notes)
	if !color {
		return b.String()
	}
	lines := strings.Split(b.String(), "\n")
	for i, line := range lines {
		var p int32
		if _, err := fmt.Sscanf(line, "%d ", &p); err != nil {
			continue
		}
		if ts, ok := w.changed[p]; ok && at.Sub(ts) < Highlight && strings.HasPrefix(line, fmt.Sprint(p)+" ") {
			lines[i] = "\x1b[1;33m" + line + "\x1b[0m"
		}
	}
	return strings.Join(lines, "\n")
}

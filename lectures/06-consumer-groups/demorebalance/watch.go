package demorebalance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

// This file is the harness that shows the demo: it prints the members'
// events as they come, and after each step waits until the group has
// settled and says who owns which partition. The Kafka calls are in demo.go.

// emit records a member's event and prints it.
func (d *demo) emit(e groups.Event) {
	d.log.Emit(e)
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintln(d.out, e)
}

// say prints a line of the demo's own.
func (d *demo) say(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.out, format+"\n", args...)
}

// waitSettled waits until every partition has one live owner and orders are
// read, says who owns which, and returns it. A group whose reads are not
// answered fails here, before the demo goes on.
func (d *demo) waitSettled(ctx context.Context, title string) (map[string][]int32, error) {
	live := slices.Sorted(maps.Keys(d.members))
	var owners map[string][]int32
	err := d.log.WaitFor(ctx, time.Minute, 50*time.Millisecond, func() bool {
		ev := d.log.Events()
		owners = ownersOf(ev, live)
		return settled(owners, live) && slices.ContainsFunc(ev, processed)
	})
	if errors.Is(err, errWrite) {
		return nil, err // the group is fine; the orders are not
	}
	if err != nil {
		return nil, fmt.Errorf("%s: the group did not settle: %w", title, err)
	}
	d.say("== owners: %s", format(owners, live))
	return owners, nil
}

// processed: e is a record a member read.
func processed(e groups.Event) bool { return e.Kind == "processed" }

// ownersOf is what each live member owns after the events so far.
func ownersOf(ev []groups.Event, live []string) map[string][]int32 {
	owners := map[string][]int32{}
	for _, m := range live {
		owners[m] = groups.Owned(ev, m)
	}
	return owners
}

// settled: every partition has exactly one live owner, and every live member
// owns some.
func settled(owners map[string][]int32, live []string) bool {
	seen := map[int32]bool{}
	for _, m := range live {
		if len(owners[m]) == 0 {
			return false
		}
		for _, p := range owners[m] {
			if seen[p] {
				return false
			}
			seen[p] = true
		}
	}
	return len(seen) == Partitions
}

// format is who owns which partition, on one line.
func format(owners map[string][]int32, live []string) string {
	var parts []string
	for _, m := range live {
		parts = append(parts, fmt.Sprintf("%s %v", m, owners[m]))
	}
	return strings.Join(parts, "  ")
}

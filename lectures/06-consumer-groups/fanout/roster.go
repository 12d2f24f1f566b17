package fanout

import (
	"cmp"
	"slices"
	"sync"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

// This file is the harness that keeps count of a read: what each member
// owns and how many records it read, from the events the members tell, and
// when the groups have settled and read everything. The Kafka calls are in
// fanout.go.

// roster is what one read's members told.
type roster struct {
	mu       sync.Mutex
	members  []Member  // by member: its group and how many records it read
	assigned [][]int32 // by member: what it owns now
}

// newRoster is the roster of one member per entry of groupOf, the group it
// belongs to.
func newRoster(groupOf []string) *roster {
	ro := &roster{members: make([]Member, len(groupOf)), assigned: make([][]int32, len(groupOf))}
	for i, g := range groupOf {
		ro.members[i].Group = g
	}
	return ro
}

// note takes member i's event: partitions assigned, revoked or lost, or a
// record read.
func (ro *roster) note(i int, e groups.Event) {
	ro.mu.Lock()
	defer ro.mu.Unlock()
	switch e.Kind {
	case "assigned":
		ro.assigned[i] = union(ro.assigned[i], e.Partitions)
	case "revoked", "lost":
		ro.assigned[i] = slices.DeleteFunc(ro.assigned[i], func(p int32) bool { return slices.Contains(e.Partitions, p) })
	case "processed":
		ro.members[i].Read++
	}
}

// settled: every member owns partitions, and every group owns all of the
// topic's; with nothing to read (want 0), the idle group's three busy
// members and one idle.
func (ro *roster) settled(partitions, want int) bool {
	ro.mu.Lock()
	defer ro.mu.Unlock()
	if want == 0 {
		return idleSettled(ro.assigned)
	}
	owned := map[string]int{}
	for i, m := range ro.members {
		if len(ro.assigned[i]) == 0 {
			return false // every member owns partitions before the orders come
		}
		owned[m.Group] += len(ro.assigned[i])
	}
	for _, n := range owned {
		if n != partitions {
			return false
		}
	}
	return true
}

// done: every group has read want records.
func (ro *roster) done(want int) bool {
	ro.mu.Lock()
	defer ro.mu.Unlock()
	read := map[string]int{}
	for _, m := range ro.members {
		read[m.Group] += m.Read
	}
	for _, n := range read {
		if n < want {
			return false
		}
	}
	return true
}

// keepOwned records in each member what it owns now.
func (ro *roster) keepOwned() {
	ro.mu.Lock()
	defer ro.mu.Unlock()
	for i := range ro.members {
		ro.members[i].Partitions = slices.Clone(ro.assigned[i])
	}
}

// sorted is the members, once they have left: by group, and within a group
// by their first partition, since which member got which is the group's
// choice.
func (ro *roster) sorted() []Member {
	ro.mu.Lock()
	defer ro.mu.Unlock()
	slices.SortStableFunc(ro.members, func(a, b Member) int {
		if c := cmp.Compare(order(a.Group), order(b.Group)); c != 0 {
			return c
		}
		return cmp.Compare(first(a.Partitions), first(b.Partitions))
	})
	return ro.members
}

// idleSettled: three members own one partition each, one owns none.
func idleSettled(assigned [][]int32) bool {
	ones, none := 0, 0
	for _, a := range assigned {
		switch len(a) {
		case 0:
			none++
		case 1:
			ones++
		}
	}
	return ones == 3 && none == 1
}

// union is a with b's partitions added, sorted.
func union(a, b []int32) []int32 {
	for _, p := range b {
		if !slices.Contains(a, p) {
			a = append(a, p)
		}
	}
	slices.Sort(a)
	return a
}

// first is a member's first partition, for the order of the members.
func first(ps []int32) int32 {
	if len(ps) == 0 {
		return 1 << 30 // idle members last
	}
	return ps[0]
}

// order is where group g's members come in the result.
func order(g string) int { return map[string]int{"notifications": 0, "analytics": 1, "baristas": 2}[g] }

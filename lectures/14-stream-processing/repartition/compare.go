package repartition

import (
	"fmt"
	"maps"
	"slices"
)

// This file is the harness that holds a run to the batch recount: the
// streaming join's counts and output against the recount's, what the
// payments were drawn to be, and the payments the repartition stage wrote.
// The stages' Kafka calls are in stream.go.

// differ is how the run differs from the batch recount b; nothing when
// they agree.
func (r Result) differ(b Batch) []string {
	d := Compare(r.Join.Counts, r.Joined, b)
	if r.Meant != b.Counts {
		d = append(d, fmt.Sprintf("the payments were drawn as %s; the recount found %s", r.Meant, b.Counts))
	}
	if r.Rekeyed != r.Payments {
		d = append(d, fmt.Sprintf("%d payments written, %d re-keyed", r.Payments, r.Rekeyed))
	}
	return d
}

// Compare says how a streaming join's counts and output differ from the
// batch recount's; nothing when they are equal.
func Compare(c Counts, out []Joined, b Batch) []string {
	var d []string
	if c != b.Counts {
		d = append(d, fmt.Sprintf("the streaming join counted %s; the recount %s", c, b.Counts))
	}
	if len(out) != c.Matched {
		d = append(d, fmt.Sprintf("the streaming join matched %d payments but its output holds %d records", c.Matched, len(out)))
	}
	got := map[string]Joined{}
	for _, j := range out {
		if _, dup := got[j.OrderID]; dup {
			d = append(d, "order "+j.OrderID+" is in the output twice")
		}
		got[j.OrderID] = j
	}
	for _, want := range b.Joined {
		g, ok := got[want.OrderID]
		switch {
		case !ok:
			d = append(d, "order "+want.OrderID+" is missing from the output")
		case !g.Same(want):
			d = append(d, fmt.Sprintf("order %s joined as %+v; the recount %+v", want.OrderID, g, want))
		}
		delete(got, want.OrderID)
	}
	for _, id := range slices.Sorted(maps.Keys(got)) {
		d = append(d, "order "+id+" is in the output; the recount did not join it")
	}
	return d
}

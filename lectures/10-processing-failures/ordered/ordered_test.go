package ordered

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestCommitsUpToTheLowestUnfinished(t *testing.T) {
	rec := func(p int32, o int64) *kgo.Record {
		return &kgo.Record{Topic: "t", Partition: p, Offset: o, LeaderEpoch: 7}
	}
	m := New()
	for o := int64(10); o < 13; o++ {
		m.Take(rec(0, o))
	}
	m.Take(rec(1, 5))
	at := func(only map[string][]int32) map[int32]int64 {
		out := map[int32]int64{}
		for p, eo := range m.Committable(only)["t"] {
			out[p] = eo.Offset
		}
		return out
	}
	m.Finish(rec(0, 11)) // out of order: 10 is still in a worker
	if got, want := at(nil), map[int32]int64{0: 10, 1: 5}; !reflect.DeepEqual(got, want) {
		t.Fatalf("with 10 and 5 unfinished: %v, want %v", got, want)
	}
	if got := at(nil); len(got) != 0 {
		t.Fatalf("nothing moved, and Committable returned %v", got)
	}
	m.Finish(rec(0, 10))
	m.Finish(rec(0, 12))
	offs := m.Committable(map[string][]int32{"t": {0}})
	if got, want := offs["t"][0], (kgo.EpochOffset{Epoch: 7, Offset: 13}); got != want || len(offs["t"]) != 1 {
		t.Fatalf("all of partition 0 finished (only 0 asked): %v, want only {0: %v}", offs, want)
	}
	m.Unsend(offs)
	if got, want := at(map[string][]int32{"t": {0}}), map[int32]int64{0: 13}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after a failed commit: %v, want %v again", got, want)
	}
	m.Forget(map[string][]int32{"t": {1}})
	m.Finish(rec(1, 5))
	if got := at(nil); len(got) != 0 {
		t.Fatalf("a forgotten partition came back: %v", got)
	}
}

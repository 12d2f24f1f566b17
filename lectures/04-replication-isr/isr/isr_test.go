package isr

import (
	"strings"
	"testing"
	"time"
)

func topic(parts ...Partition) Topic { return Topic{Name: "t", MinISR: 2, Partitions: parts} }

func TestCountsAndChanges(t *testing.T) {
	full := topic(
		Partition{ID: 0, Leader: 1, Epoch: 3, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}},
		Partition{ID: 1, Leader: 2, Epoch: 1, Replicas: []int32{2, 3, 1}, ISR: []int32{1, 2, 3}},
	)
	if !full.FullyReplicated() || full.UnderReplicated() != 0 || full.UnderMinISR() != 0 {
		t.Fatalf("full topic: %+v", full)
	}
	down := topic(
		Partition{ID: 0, Leader: 3, Epoch: 4, Replicas: []int32{1, 2, 3}, ISR: []int32{3}, Offline: []int32{1, 2}},
		Partition{ID: 1, Leader: 2, Epoch: 1, Replicas: []int32{2, 3, 1}, ISR: []int32{2, 3}, Offline: []int32{1}},
	)
	if down.FullyReplicated() || down.UnderReplicated() != 2 || down.UnderMinISR() != 1 {
		t.Fatalf("down: under-replicated %d, under min ISR %d", down.UnderReplicated(), down.UnderMinISR())
	}
	var got []string
	for _, c := range Changes(full, down) {
		got = append(got, c.String())
	}
	want := "p0 leader 1 -> 3|p0 epoch 3 -> 4|p0 isr [1 2 3] -> [3]|p0 offline [] -> [1 2]|p1 isr [1 2 3] -> [2 3]|p1 offline [] -> [1]"
	if strings.Join(got, "|") != want {
		t.Fatalf("changes:\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
	if n := len(down.NotPreferred()); n != 1 {
		t.Fatalf("not preferred: %d, want 1 (partition 0 led by 3, prefers 1)", n)
	}
}

func TestWatchNotesAndHighlights(t *testing.T) {
	var w Watch
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	before := topic(Partition{ID: 0, Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}})
	after := topic(Partition{ID: 0, Leader: 3, Epoch: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{2, 3}, Offline: []int32{1}})
	if c := w.Observe(before, at); len(c) != 0 {
		t.Fatalf("first look: %v", c)
	}
	if c := w.Observe(after, at.Add(time.Second)); len(c) != 4 {
		t.Fatalf("changes: %v", c)
	}
	frame := w.Frame(after, at.Add(2*time.Second), true)
	if !strings.Contains(frame, "\x1b[1;33m0 ") || !strings.Contains(frame, "12:00:01 leader 1->3, isr [1 2 3]->[2 3], offline []->[1]") {
		t.Fatalf("frame:\n%q", frame)
	}
	if frame := w.Frame(after, at.Add(time.Minute), true); strings.Contains(frame, "\x1b[") {
		t.Fatalf("highlight should fade after %s:\n%q", Highlight, frame)
	}
}

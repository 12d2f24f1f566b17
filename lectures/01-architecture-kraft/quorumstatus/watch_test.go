package quorumstatus

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWatchNotesLeaderChanges(t *testing.T) {
	var w Watch
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	leader := func(id int32) Status { return Status{RaftLeader: id, Voters: []int32{1, 2, 3}} }

	if ev := w.Observe(leader(3), nil, at(0)); ev != "" {
		t.Fatalf("first look is no change, got %q", ev)
	}
	if ev := w.Observe(leader(3), nil, at(1000)); ev != "" {
		t.Fatalf("same leader is no change, got %q", ev)
	}
	if ev := w.Observe(Status{}, errors.New("timeout"), at(2000)); ev != "" {
		t.Fatalf("a failed look is no change, got %q", ev)
	}
	ev := w.Observe(leader(-1), nil, at(2500))
	if !strings.Contains(ev, "RaftLeader 3 -> none") {
		t.Fatalf("got %q", ev)
	}
	ev = w.Observe(leader(1), nil, at(3200))
	if !strings.Contains(ev, "RaftLeader none -> 1: elected 2.2s after") {
		t.Fatalf("got %q", ev)
	}
	ev = w.Observe(leader(2), nil, at(4200))
	if !strings.Contains(ev, "RaftLeader 1 -> 2: elected 1s after") {
		t.Fatalf("got %q", ev)
	}
	if len(w.Events) != 3 {
		t.Fatalf("events: %q", w.Events)
	}
	frame := w.Frame(leader(2), nil, at(4200))
	if !strings.Contains(frame, "Leader changes:\n  12:00:02.500  RaftLeader 3 -> none") {
		t.Fatalf("frame:\n%s", frame)
	}
}

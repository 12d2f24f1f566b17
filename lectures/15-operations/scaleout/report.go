package scaleout

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// This file is the harness around Run: the copy rate it measures from node
// 4's samples, and what it prints. The reassignment and its throttle are in
// scaleout.go.

// Print writes the run: the replicas before, asked for and after, the copy
// against its throttle, and the witness.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "topic %s, %d partitions, replicas preferred leader first\n", r.Topic, len(r.Before))
	t := brewkit.NewTable(w, "PARTITION", "BEFORE", "NODE 4 UP", "TARGET", "AFTER", "LEADER")
	for _, p := range slices.Sorted(maps.Keys(r.Before)) {
		up := "unchanged"
		if !r.Untouched {
			up = "MOVED"
		}
		t.Row(p, list(r.Before[p]), up, list(r.Target[p]), list(r.After[p]), r.Leaders[p])
	}
	t.Flush() //nolint:errcheck // a writer of ours
	fmt.Fprintf(w, "node 4: %d of %d replicas after the reassignment; ISR full: %s\n", r.After.On(Node), 3*len(r.After), yes(r.ISRFull))
	fmt.Fprintf(w, "copy: %.1f MiB in %s, rate %.2f MiB/s = %.0f%% of the throttle (%d MiB/s)\n",
		float64(r.Copied)/(1<<20), r.CopyTook.Round(100*time.Millisecond), r.Rate/(1<<20), 100*r.Rate/float64(r.Throttle), r.Throttle>>20)
	fmt.Fprintf(w, "reassignment complete in %s\n", r.ReassignTook.Round(100*time.Millisecond))
	if r.DrainTook > 0 {
		fmt.Fprintf(w, "drain: node 4 emptied in %s, stopped, unregistered: %s\n", r.DrainTook.Round(100*time.Millisecond), yes(r.Drained && r.Unregistered))
	}
	fmt.Fprintf(w, "witness: sent %d, acknowledged %d, read %d: lost %d, duplicated %d; longest wait for an acknowledgement %s\n",
		r.Witness.Sent, r.Witness.Acked, r.Witness.Read, r.Witness.Lost, r.Witness.Duplicated, r.Witness.LongestGap.Round(10*time.Millisecond))
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

func list(rs []int32) string {
	if len(rs) == 0 {
		return "-"
	}
	return fmt.Sprint(rs)
}

// copyRate is the copy's duration, bytes and rate from the samples: from
// the last sample where node 4 held nothing (until it learns of the
// reassignment and fetches, no throttle is at work: on a loaded machine
// that took over 2 s) to the last sample before it held its final size.
// What follows is not the throttled copy: the last replicas join the ISR,
// and the witness's few new records trickle in until Kafka marks the
// reassignment complete.
func copyRate(samples []Sample) (time.Duration, int64, float64) {
	if len(samples) == 0 {
		return 0, 0, 0
	}
	final := samples[len(samples)-1].Bytes
	var began time.Duration
	var end *Sample
	for i, s := range samples {
		if s.Bytes == 0 {
			began, end = s.At, nil
			continue
		}
		if s.Bytes < final || end == nil {
			end = &samples[i]
		}
		if s.Bytes >= final {
			break
		}
	}
	if end == nil || end.At <= began {
		return 0, 0, 0
	}
	took := end.At - began
	return took, end.Bytes, float64(end.Bytes) / took.Seconds()
}

// count is how many of m's values are n.
func count(m map[int32]int32, n int32) int {
	c := 0
	for _, v := range m {
		if v == n {
			c++
		}
	}
	return c
}

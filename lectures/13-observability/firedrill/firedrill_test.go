package firedrill

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// Bounds the lesson states: every alert fires within FireBound of its fault
// and resolves within ResolveBound of its fix (BrewProduceErrors within
// ProduceErrorsResolve: its rate looks a minute back).
const (
	FireBound            = 90 * time.Second
	ResolveBound         = 90 * time.Second
	ProduceErrorsResolve = 2 * time.Minute
)

// The fire drill on real Kafka and the course's Prometheus: no alert in the
// healthy minute, every expected alert fires on its fault within its bound
// and resolves after its fix, no other alert of ours fires, the kitchen
// cooks every order written, and the timeline has the README's shape.
func TestFireDrillReadmeAlone(t *testing.T) {
	env := brewtest.Cluster(t)
	env.RequireReal(t)
	nodes := env.NodeControl(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	o := Defaults
	o.Progress = func(s string) { t.Log(s) }
	rep, err := Run(ctx, env.Config, nodes, Serve, o)
	if err != nil {
		t.Fatal(err)
	}
	// The report first, then what is wrong with it: a CI log that keeps a
	// failed test's last lines keeps the reasons.
	var out bytes.Buffer
	Print(&out, rep)
	t.Log("\n" + out.String())
	for _, s := range rep.Steps {
		for _, tm := range s.Timings {
			resolve := ResolveBound
			if tm.Expect.Alert == "BrewProduceErrors" {
				resolve = ProduceErrorsResolve
			}
			switch {
			case !tm.Fired():
				t.Errorf("step %s: %s did not fire within %s%s", s.Step.Name, tm.Expect, o.FireIn, resets(tm))
			case tm.Firing > FireBound:
				t.Errorf("step %s: %s fired %s after the fault, over %s%s", s.Step.Name, tm.Expect, tm.Firing, FireBound, resets(tm))
			case !tm.Cleared():
				t.Errorf("step %s: %s did not resolve within %s of the fix", s.Step.Name, tm.Expect, o.ResolveIn)
			case tm.Resolved > resolve:
				t.Errorf("step %s: %s resolved %s after the fix, over %s", s.Step.Name, tm.Expect, tm.Resolved, resolve)
			}
			if tm.Pending > tm.Firing {
				t.Errorf("step %s: %s pending at %s, after firing at %s", s.Step.Name, tm.Expect, tm.Pending, tm.Firing)
			}
		}
		if len(s.Unexpected) > 0 {
			t.Errorf("step %s: other alerts fired: %v (%s)", s.Step.Name, s.Unexpected, strings.Join(s.Notes, "; "))
		}
	}
	offlineCountedByEveryController(t, rep)
	if rep.Healthy < o.Healthy {
		t.Errorf("healthy for %s, want %s", rep.Healthy, o.Healthy)
	}
	if rep.Cooked < rep.Placed || rep.Placed == 0 {
		t.Errorf("placed %d, cooked %d: the kitchen must cook every order written", rep.Placed, rep.Cooked)
	}
	if rep.Failed == 0 {
		t.Errorf("no write failed, yet the quorum step stopped two of three nodes")
	}
	brewtest.MatchesReadme(t, "../README.md", "fire-drill", out.String())
	brewtest.MatchesReadme(t, "../README.en.md", "fire-drill", out.String())
}

// resets says when an alert that was pending went back to inactive.
func resets(tm Timing) string {
	if len(tm.Reset) == 0 {
		return ""
	}
	var at []string
	for _, r := range tm.Reset {
		at = append(at, r.Round(time.Second).String())
	}
	return fmt.Sprintf(" (pending, then no longer, at %s after the fault: its for: started again)", strings.Join(at, ", "))
}

// offlineCountedByEveryController: when BrewOfflinePartitions fired, a
// controller that was not the active one reported the same offline count as
// the active one (every controller replays the metadata log; only
// ActiveControllerCount tells them apart), which is why the rule takes max().
func offlineCountedByEveryController(t *testing.T, rep *Report) {
	t.Helper()
	for _, s := range rep.Steps {
		if !slices.ContainsFunc(s.Timings, func(tm Timing) bool { return tm.Expect.Alert == "BrewOfflinePartitions" && tm.Fired() }) {
			continue
		}
		t.Logf("step %s: when BrewOfflinePartitions fired, each node's exporter said %+v", s.Step.Name, s.Controllers)
		active := slices.IndexFunc(s.Controllers, func(v ControllerView) bool { return v.Active == 1 })
		if active < 0 || s.Controllers[active].Offline < 1 {
			t.Errorf("step %s: no active controller reported an offline partition: %+v", s.Step.Name, s.Controllers)
			continue
		}
		if !slices.ContainsFunc(s.Controllers, func(v ControllerView) bool { return v.Active == 0 && v.Offline == s.Controllers[active].Offline }) {
			t.Errorf("step %s: no controller but the active one (node %s) reported its %v offline partitions: %+v", s.Step.Name, s.Controllers[active].Node, s.Controllers[active].Offline, s.Controllers)
		}
	}
}

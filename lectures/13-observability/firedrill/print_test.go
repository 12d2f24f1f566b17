package firedrill

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// The timeline of a measured drill prints as the README's block: a step's
// name and how long its fix took on its first row, "-" for an alert that
// never fired.
func TestPrintMatchesTheReadme(t *testing.T) {
	s := time.Second
	rep := &Report{Healthy: 60 * s, Placed: 4986, Failed: 613, Cooked: 4987}
	timings := map[string][][3]time.Duration{
		"kitchen": {{6 * s, 21 * s, 4 * s}, {36 * s, 51 * s, 4 * s}, {11 * s, 41 * s, 4 * s}},
		"node":    {{10 * s, 25 * s, 5 * s}, {5 * s, 20 * s, 9 * s}, {5 * s, 15 * s, 9 * s}},
		"quorum":  {{15 * s, 30 * s, 9 * s}, {10 * s, 25 * s, 9 * s}, {10 * s, 25 * s, 9 * s}, {20 * s, 20 * s, 64 * s}},
		"frozen":  {{10 * s, 25 * s, 4 * s}, {10 * s, 25 * s, 4 * s}},
	}
	fixed := map[string]time.Duration{"kitchen": 0, "node": 5 * s, "quorum": 9 * s, "frozen": 0}
	for _, st := range Steps("brew.obs.drill.1") {
		res := StepResult{Step: st, FixedIn: fixed[st.Name]}
		for i, e := range st.Expect {
			tm := timings[st.Name][i]
			res.Timings = append(res.Timings, Timing{Expect: e, Pending: tm[0], Firing: tm[1], Resolved: tm[2]})
		}
		rep.Steps = append(rep.Steps, res)
	}
	var out bytes.Buffer
	Print(&out, rep)
	brewtest.MatchesReadme(t, "../README.md", "fire-drill", out.String())

	// An alert that never fired shows "-", which the README's ranges refuse.
	rep.Steps[0].Timings[0].Firing = 0
	out.Reset()
	Print(&out, rep)
	if !bytes.Contains(out.Bytes(), []byte("BrewGroupNoMembers             6        -")) {
		t.Errorf("an alert that never fired is not shown as -:\n%s", out.String())
	}
}

// On the simulation the drill refuses in one line, naming what it needs,
// before it creates anything or touches a node.
func TestDrillRefusesTheSimulation(t *testing.T) {
	env := brewtest.Sim(t)
	_, err := Run(t.Context(), env.Config, nil, Serve, Defaults)
	if err == nil || !strings.Contains(err.Error(), "needs real Kafka") || !strings.Contains(err.Error(), "make up STAND=native") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("the drill on the simulation: %v", err)
	}
}

// Package drill is the fire drill: it breaks the stand for real, one fault at
// a time, and times the course's alerts on Prometheus. Before the faults, a
// minute of healthy traffic (a till placing orders, a kitchen cooking them)
// in which no alert may fire; then for each step the fault, the wait until
// every alert the step expects fires, the fix, and the wait until they
// resolve. The timeline is read from Prometheus' own API: pending, firing
// and gone, in seconds from the fault and from the fix.
package firedrill

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/lectures/13-observability/kitchen"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Expect is an alert a step must make fire: its name and the labels it must
// carry (the group, the node).
type Expect struct {
	Alert  string
	Labels map[string]string
}

func (e Expect) String() string {
	if len(e.Labels) == 0 {
		return e.Alert
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(e.Labels)) {
		kv = append(kv, k+"="+e.Labels[k])
	}
	return e.Alert + "{" + strings.Join(kv, ",") + "}"
}

func (e Expect) matches(a Alert) bool {
	if a.Name != e.Alert {
		return false
	}
	for k, v := range e.Labels {
		if a.Labels[k] != v {
			return false
		}
	}
	return true
}

// Step is one fault of the drill.
type Step struct {
	Name   string // kitchen, node, quorum, frozen
	Fault  string // what breaks, for people
	Fix    string
	Expect []Expect
	// May are alerts the fault may also fire as its consequence, not
	// its sign: no step fails for them, and no other alert may fire.
	May    []string
	break_ func(ctx context.Context, d *run) error
	fix    func(ctx context.Context, d *run) error
}

// Timing is one expected alert's timeline in a step. Durations count from
// the fault (Pending, Firing) and from the fix (Resolved); zero is never.
type Timing struct {
	Expect   Expect
	Pending  time.Duration
	Firing   time.Duration
	Resolved time.Duration
	// Reset are the moments it was pending and then no longer, before
	// it fired: an evaluation found its condition false (or its series
	// missing), and its for: started again.
	Reset []time.Duration `json:",omitempty"`
}

// Fired and Cleared say whether it fired, and whether it then went away.
func (t Timing) Fired() bool   { return t.Firing > 0 }
func (t Timing) Cleared() bool { return t.Resolved > 0 }

// StepResult is a step's timeline.
type StepResult struct {
	Step       Step
	FaultAt    time.Time
	FixAt      time.Time
	Timings    []Timing
	FixedIn    time.Duration // how long the fix itself took (a node's start)
	Unexpected []string      // other alerts that fired during the step, by name
	Notes      []string      // for each of those, what the stand looked like then
	// Controllers is what each node's exporter said when
	// BrewOfflinePartitions fired in this step (none: it did not).
	Controllers []ControllerView
}

// Report is the whole drill.
type Report struct {
	Group    string
	Topic    string
	Healthy  time.Duration // the healthy minute before the faults
	Steps    []StepResult
	Placed   int64
	Failed   int64 // orders the till could not write (in the quorum step)
	Cooked   int64
	Lag      []Point // the group's total lag over the drill, every 5 s
	Started  time.Time
	Duration time.Duration
}

// Options configure a drill.
type Options struct {
	Prometheus string // Prometheus' base URL
	Rate       int    // orders a second
	Healthy    time.Duration
	Steps      []string      // names of the steps to run, in the order of AllSteps; none: all
	FireIn     time.Duration // how long an expected alert may take to fire, from the fault
	ResolveIn  time.Duration // how long it may take to resolve, from the fix
	Progress   func(string)
}

// Defaults are the drill's defaults.
var Defaults = Options{
	Prometheus: "http://127.0.0.1:19090",
	Rate:       20,
	Healthy:    60 * time.Second,
	FireIn:     2 * time.Minute,
	ResolveIn:  2 * time.Minute,
}

// StepNames are the drill's steps, in the order it runs them.
var StepNames = []string{"kitchen", "node", "quorum", "frozen"}

// run is one drill's moving parts.
type run struct {
	cfg     brewkit.Config
	nodes   brewkit.NodeControl
	adm     *kadm.Client
	m       *kitchen.Metrics
	till    *kitchen.Till
	kitchen *kitchen.Kitchen
	topic   string
	group   string
	say     func(string)

	cookedBefore int64 // by kitchens stopped before the one running
}

func steps(group string) []Step {
	g := map[string]string{"group": group}
	return []Step{{
		Name:  "kitchen",
		Fault: "the kitchen stops; the till goes on placing orders",
		Fix:   "the kitchen starts again and cooks what waited",
		Expect: []Expect{
			{"BrewGroupNoMembers", g},
			{"BrewGroupLagTooOld", g},
			{"BrewGroupLagGrowing", g},
		},
		break_: func(ctx context.Context, d *run) error { return d.stopKitchen() },
		fix:    func(ctx context.Context, d *run) error { return d.startKitchen(ctx) },
	}, {
		Name:  "node",
		Fault: "node 3 stops (SIGTERM)",
		Fix:   "node 3 starts again",
		Expect: []Expect{
			{"BrewNodeDown", map[string]string{"node": "3"}},
			{"BrewUnderReplicatedPartitions", nil},
			{"BrewOfflinePartitions", nil},
		},
		// Node 3 may be the Raft leader: the quorum elects another
		// within seconds, well inside the alert's for:.
		May:    []string{"BrewNoActiveController"},
		break_: func(ctx context.Context, d *run) error { return d.nodes.StopNode(ctx, 3, false) },
		fix:    func(ctx context.Context, d *run) error { return d.nodes.StartNode(ctx, 3) },
	}, {
		Name:  "quorum",
		Fault: "nodes 2 and 3 stop: node 1 alone is no majority",
		Fix:   "nodes 2 and 3 start again",
		Expect: []Expect{
			{"BrewNoActiveController", nil},
			{"BrewNodeDown", map[string]string{"node": "2"}},
			{"BrewNodeDown", map[string]string{"node": "3"}},
			{"BrewProduceErrors", nil},
		},
		// Node 3 stops first, then node 2, each a controlled shutdown
		// while a quorum is left (for node 2's: nodes 1 and 2): the
		// controller moves their leaderships to node 1, shrinks the ISRs
		// to [1] and takes the partition only node 3 holds offline
		// (TestQuorumStepShrinksISRThenRefusesWritesAlone). The kitchen's
		// lag may then look old or growing: its commits, like the till's
		// writes, want two replicas in sync.
		May: []string{"BrewUnderReplicatedPartitions", "BrewOfflinePartitions", "BrewGroupLagTooOld", "BrewGroupLagGrowing"},
		break_: func(ctx context.Context, d *run) error {
			if err := d.nodes.StopNode(ctx, 3, false); err != nil {
				return err
			}
			return d.nodes.StopNode(ctx, 2, false)
		},
		fix: func(ctx context.Context, d *run) error {
			if err := d.nodes.StartNode(ctx, 2); err != nil {
				return err
			}
			return d.nodes.StartNode(ctx, 3)
		},
	}, {
		Name:  "frozen",
		Fault: "node 2 freezes (SIGSTOP): alive to the OS, silent to everyone",
		Fix:   "node 2 goes on (SIGCONT)",
		Expect: []Expect{
			{"BrewNodeDown", map[string]string{"node": "2"}},
			{"BrewUnderReplicatedPartitions", nil},
		},
		// Writes to the partitions node 2 leads hang until the controller
		// fences it (broker.session.timeout.ms, 9 s) and moves them: some
		// of the till's may time out; node 2 may be the Raft leader.
		May:    []string{"BrewProduceErrors", "BrewNoActiveController"},
		break_: func(ctx context.Context, d *run) error { return d.nodes.PauseNode(ctx, 2) },
		fix:    func(ctx context.Context, d *run) error { return d.nodes.ResumeNode(ctx, 2) },
	}}
}

// Steps returns the steps for group, as the drill runs them.
func Steps(group string) []Step { return steps(group) }

func (d *run) stopKitchen() error {
	err := d.kitchen.Stop()
	d.cookedBefore += d.kitchen.Cooked()
	d.kitchen = nil
	return err
}

func (d *run) startKitchen(ctx context.Context) error {
	k, err := kitchen.StartKitchen(ctx, d.cfg, d.m, d.topic, d.group, 0, true)
	if err != nil {
		return err
	}
	d.kitchen = k
	return nil
}

// unexpected are the alerts of ours firing that the step neither expects
// nor allows.
func unexpected(alerts []Alert, st Step, group string) []string {
	var out []string
	for _, a := range alerts {
		if a.State != "firing" || !ours(a, group) {
			continue
		}
		if slices.ContainsFunc(st.Expect, func(e Expect) bool { return e.matches(a) }) || slices.Contains(st.May, a.Name) {
			continue
		}
		out = append(out, a.Name+labelsNote(a))
	}
	return out
}

// ours says whether a is about the drill: a cluster alert, or a group alert
// of the drill's group (other groups on the stand may lag for their own
// reasons).
func ours(a Alert, group string) bool {
	g, ok := a.Labels["group"]
	return !ok || g == group
}

func labelsNote(a Alert) string {
	for _, k := range []string{"group", "node"} {
		if v, ok := a.Labels[k]; ok {
			return "{" + k + "=" + v + "}"
		}
	}
	return ""
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 0, 64) }

func pick(names []string, all []Step) ([]Step, error) {
	if len(names) == 0 {
		return all, nil
	}
	var out []Step
	for _, st := range all {
		if slices.Contains(names, st.Name) {
			out = append(out, st)
		}
	}
	for _, n := range names {
		if !slices.Contains(StepNames, n) {
			return nil, fmt.Errorf("no step %q: the steps are %s", n, strings.Join(StepNames, ", "))
		}
	}
	return out, nil
}

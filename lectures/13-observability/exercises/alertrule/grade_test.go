package alertrule

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/brew-course/kafka/lectures/13-observability/rules"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

// The two settings the rule is graded with: a rule that ignores maxAge or
// hold passes one of them at most.
var settings = []struct{ maxAge, hold time.Duration }{
	{40 * time.Second, 20 * time.Second},
	{90 * time.Second, 30 * time.Second},
}

const (
	nameHint     = "Alert is the alert's name, as on-call reads it: letters, digits and _, not starting with a digit (BrewGroupStuck)"
	exprHint     = "Expr is PromQL over the lag exporter's series; brew_group_lag_seconds is each partition's oldest unprocessed record's age in seconds"
	severityHint = "a stuck group loses orders while it lasts: it wakes someone up, Labels: map[string]string{\"severity\": \"page\"}"
	forHint      = "For is how long Expr must hold before the alert fires (pending until then): the hold StuckGroup is given"
	promqlHint   = "the expression must be PromQL that Prometheus accepts: `promtool check rules FILE` on a rule file with it tells where it breaks"
	idleHint     = "a group with nothing to process is idle, not stuck: its oldest unprocessed record does not exist (brew_group_lag_seconds is 0), whatever its members or its lag's history say"
	recordsHint  = "age, not a record count: thousands of records the kitchen works through in seconds are fine, two orders waiting for minutes are not; brew_group_lag_seconds is each partition's oldest record's age"
	sumHint      = "a group is as late as its oldest partition: ages of partitions do not add up (the group's age is their max)"
	neverHint    = "a group is as late as its worst partition: one hung member of three leaves one partition's records waiting while the others are fresh, so the group's age is the max of its partitions', not their average"
	byGroupHint  = "one alert per group, with its group label: aggregate by (group) (max by (group) (...)), or on-call gets one alert for the whole cluster and no name to act on"
	onlyHint     = "one alert per group, labelled with the group alone: keep only group in by (...) (topic and partition make one alert per partition)"
	earlyHint    = "older than maxAge means > maxAge seconds: the rule went off before the oldest record was that old, or before hold had passed"
	resolveHint  = "once the group has caught up its oldest record is young again and the alert must go: compare the age now (no max_over_time or offset of the past)"
)

// The groups of the scenarios.
const (
	kitchen   = "brew.kitchen"
	courier   = "brew.courier"
	analytics = "brew.analytics"
	reports   = "brew.reports"
)

func TestGrade(t *testing.T) {
	// The grader needs promtool, not a cluster: grade has no mode without
	// one, and AnyStand asks for none (with no stand up it is an in-process
	// simulation), which the grader does not use.
	grade.Start(t, grade.AnyStand)
	bin, err := rules.Promtool()
	if err != nil {
		t.Fatalf("cannot grade: %v", err)
	}
	t.Logf("graded by promtool (%s): Prometheus' rule unit tests on the grader's series", bin)
	for _, s := range settings {
		r := StuckGroup(s.maxAge, s.hold)
		checkShape(t, r, s.maxAge, s.hold)
		sc := newScenarios(s.maxAge, s.hold)
		res := run(t, r, sc)
		judge(t, r, sc, res)
		t.Logf("StuckGroup(%s, %s) = %s: promtool passed %d checks in %d test groups", s.maxAge, s.hold, show(r), res.Checks(), len(res.Groups))
	}
}

var nameRe = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

func checkShape(t *testing.T, r Rule, maxAge, hold time.Duration) {
	t.Helper()
	call := fmt.Sprintf("StuckGroup(%s, %s)", maxAge, hold)
	switch {
	case r.Alert == "":
		grade.Fail(t, nameHint, "%s returned a rule with no name (Alert)", call)
	case !nameRe.MatchString(r.Alert):
		grade.Fail(t, nameHint, "%s returned the alert name %q, which Prometheus does not take", call, r.Alert)
	case strings.TrimSpace(r.Expr) == "":
		grade.Fail(t, exprHint, "%s returned a rule with no expression (Expr)", call)
	case r.Labels["severity"] != "page":
		grade.Fail(t, severityHint, "%s returned the labels %v: severity is %q, not page", call, r.Labels, r.Labels["severity"])
	case r.For != hold:
		grade.Fail(t, forHint, "%s returned For %s, not %s", call, r.For, hold)
	}
}

func show(r Rule) string {
	return fmt.Sprintf("%s: %s, for %s, labels %v", r.Alert, strings.Join(strings.Fields(r.Expr), " "), rules.FormatDuration(r.For), r.Labels)
}

// scenarios is the timeline of one setting. The series are scraped every 5 s
// from 0 s. In the stuck scenarios a group is healthy until 60 s; from 65 s
// its oldest unprocessed record is 3 s old and ages 5 s a scrape, so it is
// first older than maxAge at over (pending from then), the alert fires at
// fires (over + hold), and the group catches up at fixed.
type scenarios struct {
	maxAge, hold             time.Duration
	over, fires, fixed, last time.Duration
}

const step = 5 * time.Second

func newScenarios(maxAge, hold time.Duration) scenarios {
	k := int(math.Floor((maxAge.Seconds()-3)/step.Seconds())) + 1 // the first scrape over maxAge: 3 + 5k > maxAge
	s := scenarios{maxAge: maxAge, hold: hold, over: 65*time.Second + time.Duration(k)*step}
	s.fires = s.over + hold
	s.fixed = s.fires + 30*time.Second
	s.last = s.fixed + time.Minute
	return s
}

// samples is how many scrapes from 0 to d (both included).
func samples(d time.Duration) int { return int(d/step) + 1 }

// rising is n values in promtool's series notation: a, then b more each
// scrape ("3+5x2" is 3 8 13).
func rising(a, b float64, n int) string { return fmt.Sprintf("%g+%gx%d", a, b, n-1) }

// flat is v n times ("4x11" is 12 values).
func flat(v float64, n int) string { return fmt.Sprintf("%gx%d", v, n-1) }

// cycle is n values taken in turn from vs: a value that comes and goes.
func cycle(n int, vs ...float64) string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint(vs[i%len(vs)])
	}
	return strings.Join(out, " ")
}

type series struct {
	Series string `yaml:"series"`
	Values string `yaml:"values"`
}

func lag(metric, group, topic string, partition int, values ...string) series {
	return series{
		Series: fmt.Sprintf(`%s{job="brew-lag",instance="127.0.0.1:17080",group=%q,topic=%q,partition="%d",kind="consumer"}`, metric, group, topic, partition),
		Values: strings.Join(values, " "),
	}
}

func members(group string, values ...string) series {
	return series{
		Series: fmt.Sprintf(`brew_group_members{job="brew-lag",instance="127.0.0.1:17080",group=%q,kind="consumer"}`, group),
		Values: strings.Join(values, " "),
	}
}

const (
	records = "brew_group_lag_records"
	seconds = "brew_group_lag_seconds"
)

// hungKitchen: one of the kitchen's three members hangs at 60 s; its
// partition's orders wait (33 more a scrape, the oldest aging), the other
// two partitions keep up. It is restarted at fixed and drains them. The
// nightly reports group (no member, nothing to process) is beside it.
func (s scenarios) hungKitchen() []series {
	all := samples(s.last)
	healthy, stuck, after := samples(60*time.Second), int((s.fixed-65*time.Second)/step), samples(s.last-s.fixed)
	return []series{
		members(kitchen, flat(3, all)),
		lag(records, kitchen, "brew.orders.v1", 0, cycle(all, 4, 7, 2, 5, 9, 3)),
		lag(seconds, kitchen, "brew.orders.v1", 0, cycle(all, 0.4, 0.8, 0.2, 0.5, 1.1, 0.3)),
		lag(records, kitchen, "brew.orders.v1", 1, flat(5, healthy), rising(33, 33, stuck), flat(3, after)),
		lag(seconds, kitchen, "brew.orders.v1", 1, flat(0.6, healthy), rising(3, 5, stuck), flat(0.7, after)),
		lag(records, kitchen, "brew.orders.v1", 2, cycle(all, 6, 3, 8, 4, 2)),
		lag(seconds, kitchen, "brew.orders.v1", 2, cycle(all, 0.7, 0.3, 0.9, 0.5, 0.2)),
		members(reports, flat(0, all)),
		lag(records, reports, "brew.orders.v1", 0, flat(0, all)),
		lag(seconds, reports, "brew.orders.v1", 0, flat(0, all)),
	}
}

// lateNight: the shops are closing; the courier's one member is blocked on
// the partner's API at 60 s with two orders of partition 0 in hand; its
// other partitions have nothing to process. The kitchen is quiet.
func (s scenarios) lateNight() []series {
	all := samples(s.last)
	healthy, stuck, after := samples(60*time.Second), int((s.fixed-65*time.Second)/step), samples(s.last-s.fixed)
	out := []series{
		members(courier, flat(1, all)),
		lag(records, courier, "brew.kitchen.v1", 0, flat(0, healthy), flat(2, stuck), flat(0, after)),
		lag(seconds, courier, "brew.kitchen.v1", 0, flat(0, healthy), rising(3, 5, stuck), flat(0, after)),
		members(kitchen, flat(3, all)),
	}
	for p := 1; p < 3; p++ {
		out = append(out, lag(records, courier, "brew.kitchen.v1", p, flat(0, all)), lag(seconds, courier, "brew.kitchen.v1", p, flat(0, all)))
	}
	for p := range 3 {
		out = append(out, lag(records, kitchen, "brew.orders.v1", p, cycle(all, 0, 1, 0, 0)), lag(seconds, kitchen, "brew.orders.v1", p, cycle(all, 0, 0.3, 0, 0)))
	}
	return out
}

// lunchRush: 80 shops place 160 orders a second; the kitchen's six members
// keep up 15 s behind: 2,400 records owed, the oldest 12-15 s old, all
// along.
func (s scenarios) lunchRush() []series {
	all := samples(s.last)
	out := []series{members(kitchen, flat(6, all))}
	for p := range 6 {
		out = append(out,
			lag(records, kitchen, "brew.orders.v1", p, cycle(all, 380+float64(10*p), 420, 400, 395)),
			lag(seconds, kitchen, "brew.orders.v1", p, cycle(all, 12+float64(p)/2, 14.5, 13, 15)))
	}
	return out
}

// idle: 3 a.m.; every shop is closed. The kitchen and analytics have
// caught up long ago (members, nothing to process); the nightly reports
// group has no member and nothing to process until its batch runs.
func (s scenarios) idle() []series {
	all := samples(s.last)
	out := []series{
		members(kitchen, flat(3, all)),
		members(analytics, flat(1, all)),
		members(reports, flat(0, all)),
	}
	for _, g := range []string{kitchen, analytics, reports} {
		for p := range 3 {
			out = append(out, lag(records, g, "brew.orders.v1", p, flat(0, all)), lag(seconds, g, "brew.orders.v1", p, flat(0, all)))
		}
	}
	return out
}

// The test groups, by name: the judge tells what went wrong by which failed.
const (
	gIdle    = "idle groups at night page no one"
	gRush    = "the lunch rush pages no one"
	gBefore  = "a hung kitchen member: pending, not firing, before hold"
	gFires   = "a hung kitchen member: the kitchen's alert fires after hold"
	gNight   = "the courier stuck at night on two orders: its alert fires"
	gResolve = "a hung kitchen member restarted: the alert resolves"
)

type check struct {
	EvalTime  string     `yaml:"eval_time"`
	Alertname string     `yaml:"alertname"`
	ExpAlerts []expected `yaml:"exp_alerts,omitempty"`
}

type expected struct {
	ExpLabels map[string]string `yaml:"exp_labels"`
}

type testGroup struct {
	Name        string   `yaml:"name"`
	Interval    string   `yaml:"interval"`
	InputSeries []series `yaml:"input_series"`
	Checks      []check  `yaml:"alert_rule_test"`
}

// tests are the grader's promtool test groups for rule r.
func (s scenarios) tests(r Rule) []testGroup {
	at := func(d time.Duration, group string) check {
		c := check{EvalTime: rules.FormatDuration(d), Alertname: r.Alert}
		if group != "" {
			labels := maps.Clone(r.Labels)
			labels["group"] = group
			c.ExpAlerts = []expected{{labels}}
		}
		return c
	}
	g := func(name string, in []series, checks ...check) testGroup {
		return testGroup{Name: name, Interval: "5s", InputSeries: in, Checks: checks}
	}
	return []testGroup{
		g(gIdle, s.idle(), at(s.fires, ""), at(s.last, "")),
		g(gRush, s.lunchRush(), at(s.fires, ""), at(s.last, "")),
		g(gFires, s.hungKitchen(), at(s.fires, kitchen)),
		g(gNight, s.lateNight(), at(s.fires, courier)),
		g(gBefore, s.hungKitchen(), at(s.fires-step, "")),
		g(gResolve, s.hungKitchen(), at(s.fixed, "")),
	}
}

// run writes r into a rule file and the scenarios into a test file, and
// has promtool check the one and run the other.
func run(t *testing.T, r Rule, s scenarios) *rules.Result {
	t.Helper()
	dir := t.TempDir()
	ruleFile := map[string]any{"groups": []any{map[string]any{
		"name": "exercise", "interval": "5s",
		"rules": []any{map[string]any{
			"alert": r.Alert, "expr": r.Expr, "for": rules.FormatDuration(r.For), "labels": r.Labels,
		}},
	}}}
	testFile := map[string]any{
		"rule_files":          []string{"stuck-group.yml"},
		"evaluation_interval": "5s",
		"tests":               s.tests(r),
	}
	rulesPath, testsPath := filepath.Join(dir, "stuck-group.yml"), filepath.Join(dir, "stuck-group_test.yml")
	for path, v := range map[string]any{rulesPath: ruleFile, testsPath: testFile} {
		b, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := rules.Run(ctx, rulesPath, testsPath)
	if err != nil {
		t.Fatalf("running promtool: %v", err)
	}
	if !res.Check.Passed {
		grade.Fail(t, promqlHint, "Prometheus rejects the rule %s: %s", show(r), lastLines(res.Check.Output, 2))
	}
	return res
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " ")
}

// judge fails the rule on the first scenario it got wrong, with what
// promtool saw and the hint for that mistake.
func judge(t *testing.T, r Rule, s scenarios, res *rules.Result) {
	t.Helper()
	failed := map[string]rules.GroupResult{}
	for _, g := range res.Groups {
		if !g.Passed {
			failed[g.Name] = g
		}
	}
	setting := fmt.Sprintf("with maxAge %s and hold %s", s.maxAge, s.hold)
	if g, ok := failed[gIdle]; ok {
		grade.Fail(t, idleHint, "your rule fired at 3 a.m. for %s, with nothing to process (lag 0, oldest record 0 s old), %s: %s",
			firedGroups(g), setting, show(r))
	}
	if _, ok := failed[gRush]; ok {
		hint := recordsHint
		if strings.Contains(r.Expr, "sum") && strings.Contains(r.Expr, seconds) {
			hint = sumHint
		}
		grade.Fail(t, hint, "your rule fired for %s at the lunch rush: 2,400 records owed on six partitions, the oldest 15 s old (%s): %s", kitchen, setting, show(r))
	}
	for _, name := range []string{gFires, gNight} {
		g, ok := failed[name]
		if !ok {
			continue
		}
		group, what := kitchen, fmt.Sprintf("whose partition 1 has waited since a member hung (its oldest record %s old; its other partitions fresh)", s.ageAt(s.fires))
		if name == gNight {
			group, what = courier, fmt.Sprintf("stuck on two orders at night (the oldest %s old)", s.ageAt(s.fires))
		}
		got := gotLabels(g)
		when := rules.FormatDuration(s.fires)
		switch {
		case len(got) == 0:
			hint := neverHint
			if name == gNight {
				hint = recordsHint
			}
			grade.Fail(t, hint, "your rule did not fire at %s for %s, %s, %s: %s", when, group, what, setting, show(r))
		case len(got) > 1:
			grade.Fail(t, onlyHint, "your rule fired %d alerts at %s where one for %s was due (%s), %s: %s", len(got), when, group, labelList(got), setting, show(r))
		case got[0]["group"] == "":
			grade.Fail(t, byGroupHint, "your rule fired at %s for %s %s without its group label (%s), %s: %s", when, group, what, labelList(got), setting, show(r))
		case got[0]["group"] != group:
			grade.Fail(t, byGroupHint, "your rule fired at %s for group %s, not for %s %s, %s: %s", when, got[0]["group"], group, what, setting, show(r))
		default:
			grade.Fail(t, onlyHint, "your rule fired at %s for %s with the labels %s, not the group's alone, %s: %s", when, group, labelList(got), setting, show(r))
		}
	}
	if _, ok := failed[gBefore]; ok {
		grade.Fail(t, earlyHint, "your rule fired at %s; the kitchen's oldest record was first over %s at %s, so it was due at %s, after hold (%s): %s",
			rules.FormatDuration(s.fires-step), s.maxAge, rules.FormatDuration(s.over), rules.FormatDuration(s.fires), setting, show(r))
	}
	if _, ok := failed[gResolve]; ok {
		grade.Fail(t, resolveHint, "your rule still fired at %s, after the kitchen caught up (its oldest record 0.7 s old), %s: %s",
			rules.FormatDuration(s.fixed), setting, show(r))
	}
	if len(failed) > 0 || !res.Passed() {
		t.Fatalf("promtool failed the tests in a way the grader does not know: %s", res.Test.Output)
	}
}

// ageAt is the stuck partition's oldest record's age at d.
func (s scenarios) ageAt(d time.Duration) time.Duration {
	return 3*time.Second + (d - 65*time.Second)
}

var labelsRe = regexp.MustCompile(`Labels:\{([^}]*)\}`)
var labelRe = regexp.MustCompile(`(\w+)="([^"]*)"`)

// gotLabels are the labels of the alerts promtool got at the group's first
// failure (its lines after "got:").
func gotLabels(g rules.GroupResult) []map[string]string {
	var out []map[string]string
	inGot := false
	for _, m := range g.Messages {
		switch t := strings.TrimSpace(m); {
		case strings.HasPrefix(t, "got:"):
			inGot = true
		case strings.HasPrefix(t, "alertname:") && inGot:
			return out
		case strings.HasPrefix(t, "alertname:"), strings.HasPrefix(t, "exp:"):
			inGot = false
		}
		if !inGot {
			continue
		}
		if l := labelsRe.FindStringSubmatch(m); l != nil {
			labels := map[string]string{}
			for _, kv := range labelRe.FindAllStringSubmatch(l[1], -1) {
				if kv[1] != "alertname" {
					labels[kv[1]] = kv[2]
				}
			}
			out = append(out, labels)
		}
	}
	return out
}

func firedGroups(g rules.GroupResult) string {
	var groups []string
	for _, l := range gotLabels(g) {
		if l["group"] != "" && !slices.Contains(groups, l["group"]) {
			groups = append(groups, l["group"])
		}
	}
	if len(groups) == 0 {
		return "an idle group (the alert had no group label)"
	}
	return strings.Join(groups, " and ")
}

func labelList(ls []map[string]string) string {
	var out []string
	for _, l := range ls {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(l)) {
			kv = append(kv, k+"="+l[k])
		}
		out = append(out, "{"+strings.Join(kv, ", ")+"}")
	}
	return strings.Join(out, " ")
}

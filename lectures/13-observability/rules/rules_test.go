package rules

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// needPromtool skips a test without promtool in the fast tier, and fails it
// under BREW_REQUIRE_REAL=1 (the real tier installs Prometheus).
func needPromtool(t *testing.T) {
	t.Helper()
	if _, err := Promtool(); err != nil {
		if brewtest.RequireRealSet() {
			t.Fatalf("%v [BREW_REQUIRE_REAL=1]", err)
		}
		t.Skipf("needs promtool: %v; `make test-real` installs it and runs this test", err)
	}
}

func lectureFiles(t *testing.T) (*RuleFile, *TestFile) {
	t.Helper()
	rf, err := LoadRules(RulesFile)
	require.NoError(t, err)
	tf, err := LoadTests(TestsFile)
	require.NoError(t, err)
	return rf, tf
}

// The alerts the lecture promises, in the file's order.
var lectureAlerts = []string{
	"BrewGroupLagTooOld", "BrewGroupLagGrowing", "BrewGroupNoMembers",
	"BrewUnderReplicatedPartitions", "BrewOfflinePartitions", "BrewNoActiveController",
	"BrewNodeDown", "BrewProduceErrors",
}

// promtool checks the rule file and runs every unit test: all pass, and
// every alert is checked firing and quiet.
func TestPromtoolPassesTheRulesAndTheirTests(t *testing.T) {
	needPromtool(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := Run(ctx, RulesFile, TestsFile)
	require.NoError(t, err)
	require.True(t, r.Check.Passed, r.Check.Output)
	require.Contains(t, r.Check.Output, "SUCCESS: 8 rules found")
	require.True(t, r.Test.Passed, r.Test.Output)
	for _, g := range r.Groups {
		require.True(t, g.Passed, "%s: %v", g.Title(), g.Messages)
	}
	var names []string
	for _, a := range r.Alerts() {
		names = append(names, a.Name)
		require.True(t, a.Passed && a.InRules, "%+v", a)
		require.Positive(t, a.Firing, "%s: no check expects it to fire", a.Name)
		require.Greater(t, a.Checks, a.Firing, "%s: no check expects it quiet", a.Name)
	}
	require.Equal(t, lectureAlerts, names)
}

// Every alert has the severity label (page or ticket), a summary and a
// description naming what it is about (the group, the node), and a comment
// above it on why it exists and what production would use.
func TestEveryAlertHasSeveritySummaryAndComment(t *testing.T) {
	rf, _ := lectureFiles(t)
	require.Len(t, rf.Groups, 1, "one rule group")
	require.Equal(t, 5*time.Second, rf.Groups[0].Interval, "evaluated as often as the stand scrapes")
	var names []string
	for _, a := range rf.Alerts {
		names = append(names, a.Name)
		require.Contains(t, []string{"page", "ticket"}, a.Severity(), "%s: severity", a.Name)
		require.NotEmpty(t, a.Annotations["summary"], "%s: summary", a.Name)
		require.NotEmpty(t, a.Annotations["description"], "%s: description", a.Name)
		require.Greater(t, len(strings.Fields(a.Comment)), 25, "%s: the comment above it says why it exists, its threshold and its for", a.Name)
		require.Contains(t, a.Comment, "Production", "%s: the comment says what production would use", a.Name)
		require.LessOrEqual(t, a.For, 30*time.Second, "%s: the fire drill needs short for's", a.Name)
		// What it is about: the label it keeps (a cluster-wide alert has none).
		about := map[string]string{"by (group)": "group", "by (topic)": "topic", "up{": "node"}
		for in, l := range about {
			if strings.Contains(a.Expr, in) {
				require.Contains(t, a.Annotations["summary"], "$labels."+l, "%s: its summary names the %s", a.Name, l)
				require.Contains(t, a.Annotations["description"], "$labels."+l, "%s: its description names the %s", a.Name, l)
			}
		}
	}
	require.Equal(t, lectureAlerts, names)
}

// Every alert of the rule file is tested, and every alert tested is in the
// rule file: in one scenario it stays quiet before its for has elapsed,
// fires with its severity once it has, and resolves after the fix; and the
// healthy cluster's group checks it quiet.
func TestEveryAlertIsTestedOnItsFaultAndOnAHealthyCluster(t *testing.T) {
	rf, tf := lectureFiles(t)
	require.Equal(t, []string{RulesFile}, tf.RuleFiles)
	require.Equal(t, 5*time.Second, tf.EvaluationInterval)
	tested := map[string]bool{}
	for _, g := range tf.Groups {
		require.NotEmpty(t, g.Name, "test group %d (line %d) has no name: promtool names failures by it", g.Index, g.Line)
		require.Equal(t, 5*time.Second, g.Interval, "%s: series every 5 s, as the stand scrapes", g.Title())
		for _, c := range g.Checks {
			_, ok := rf.Alert(c.Alert)
			require.True(t, ok, "%s checks %q, which the rule file does not define", g.Title(), c.Alert)
			tested[c.Alert] = true
		}
	}
	healthy := tf.Groups[0]
	require.Contains(t, healthy.Name, "healthy")
	for _, a := range rf.Alerts {
		require.True(t, tested[a.Name], "%s has no test in %s", a.Name, TestsFile)
		require.True(t, slices.ContainsFunc(healthy.Checks, func(c Check) bool { return c.Alert == a.Name && len(c.Firing) == 0 }),
			"%s: the healthy cluster's group does not check it quiet", a.Name)
		require.True(t, provenOnFault(tf, a), "%s: no test group checks it quiet before its for, firing after, and quiet after the fix", a.Name)
	}
}

// provenOnFault reports whether a test group checks a quiet before it
// fires (with its severity), at least its for before, and quiet after.
func provenOnFault(tf *TestFile, a Alert) bool {
	for _, g := range tf.Groups {
		var fired []Check
		for _, c := range g.Checks {
			if c.Alert == a.Name && len(c.Firing) > 0 && c.Firing[0]["severity"] == a.Severity() {
				fired = append(fired, c)
			}
		}
		for _, f := range fired {
			before := slices.ContainsFunc(g.Checks, func(c Check) bool {
				return c.Alert == a.Name && len(c.Firing) == 0 && c.At < f.At && (a.For == 0 || c.At > f.At-a.For-5*time.Second)
			})
			after := slices.ContainsFunc(g.Checks, func(c Check) bool { return c.Alert == a.Name && len(c.Firing) == 0 && c.At > f.At })
			if before && after {
				return true
			}
		}
	}
	return false
}

// mutate copies the lecture's two files to a temporary folder, replaces old
// with new in the rule file (once; it must be there), and returns the
// copies' paths.
func mutate(t *testing.T, old, new string) (rulesPath, testsPath string) {
	t.Helper()
	dir := t.TempDir()
	rules, err := os.ReadFile(RulesFile)
	require.NoError(t, err)
	require.Contains(t, string(rules), old)
	rulesPath, testsPath = filepath.Join(dir, RulesFile), filepath.Join(dir, TestsFile)
	require.NoError(t, os.WriteFile(rulesPath, []byte(strings.Replace(string(rules), old, new, 1)), 0o644))
	tests, err := os.ReadFile(TestsFile)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(testsPath, tests, 0o644))
	return rulesPath, testsPath
}

// A broken rule fails its tests, and the verdict names that alert alone:
// a longer for, a threshold moved, the absent series forgotten.
func TestBrokenRuleFailsItsTests(t *testing.T) {
	needPromtool(t)
	for _, m := range []struct{ alert, old, new string }{
		{"BrewNodeDown", "up{job=\"kafka\"} == 0\n        for: 15s", "up{job=\"kafka\"} == 0\n        for: 45s"},
		{"BrewGroupLagTooOld", "max by (group) (brew_group_lag_seconds) > 30", "max by (group) (brew_group_lag_seconds) > 60"},
		{"BrewNoActiveController", " or on () vector(0)", ""},
	} {
		t.Run(m.alert, func(t *testing.T) {
			rulesPath, testsPath := mutate(t, m.old, m.new)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			r, err := Run(ctx, rulesPath, testsPath)
			require.NoError(t, err)
			require.True(t, r.Check.Passed, r.Check.Output)
			require.False(t, r.Passed())
			requireFailedAlone(t, r, m.alert)
		})
	}
}

func requireFailedAlone(t *testing.T, r *Result, alert string) {
	t.Helper()
	for _, a := range r.Alerts() {
		require.Equal(t, a.Name != alert, a.Passed, "%s: %v", a.Name, a.Messages)
	}
	failed := 0
	for _, g := range r.Groups {
		if g.Passed {
			continue
		}
		failed++
		require.True(t, slices.ContainsFunc(g.Messages, func(m string) bool { return strings.Contains(m, "alertname: "+alert+",") }),
			"%s failed without naming %s: %v", g.Title(), alert, g.Messages)
		require.True(t, slices.Contains(g.Alerts(), alert))
	}
	require.Positive(t, failed)
}

// Test groups without names (promtool then names no group in its output)
// are run one by one to tell which failed.
func TestUnnamedGroupsAreRunAloneToTellWhichFailed(t *testing.T) {
	needPromtool(t)
	rulesPath, testsPath := mutate(t, "max(kafka_controller_kafkacontroller_offlinepartitionscount) > 0\n        for: 10s",
		"max(kafka_controller_kafkacontroller_offlinepartitionscount) > 0\n        for: 20s")
	tests, err := os.ReadFile(testsPath)
	require.NoError(t, err)
	unnamed := regexp.MustCompile(`(?m)^  - name: .*\n    interval`).ReplaceAllString(string(tests), "  - interval")
	require.NotContains(t, unnamed, "- name:")
	require.NoError(t, os.WriteFile(testsPath, []byte(unnamed), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := Run(ctx, rulesPath, testsPath)
	require.NoError(t, err)
	require.False(t, r.Passed())
	requireFailedAlone(t, r, "BrewOfflinePartitions")
	for _, g := range r.Groups {
		require.Equal(t, !slices.Contains(g.Alerts(), "BrewOfflinePartitions") || g.Index == 1, g.Passed, g.Title())
	}
}

// An expression Prometheus cannot parse fails promtool's check, and no test
// runs.
func TestBadExpressionFailsTheCheck(t *testing.T) {
	needPromtool(t)
	rulesPath, testsPath := mutate(t, "max by (group) (brew_group_lag_seconds) > 30", "max by (group (brew_group_lag_seconds) > 30")
	r, err := Run(context.Background(), rulesPath, testsPath)
	require.NoError(t, err)
	require.False(t, r.Check.Passed)
	require.False(t, r.Test.Ran)
	require.Contains(t, r.Check.Output, "BrewGroupLagTooOld")
	for _, a := range r.Alerts() {
		require.False(t, a.Passed, a.Name)
	}
}

// Without promtool, Run says how to get it.
func TestNoPromtoolSaysHowToGetIt(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	old := debianPromtool
	debianPromtool = filepath.Join(t.TempDir(), "promtool")
	t.Cleanup(func() { debianPromtool = old })
	_, err := Run(context.Background(), RulesFile, TestsFile)
	require.True(t, errors.Is(err, ErrNoPromtool), "%v", err)
	require.Contains(t, err.Error(), "make services-up S=prometheus")
}

// The lecture's files are found from the lecture folder, from below it and
// from outside the checkout. From outside, only a binary that knows its
// source's folder finds them: one built with -trimpath (the test tiers
// build so) does not, and says how to name them.
func TestFilesAreFoundFromAnywhere(t *testing.T) {
	here, err := os.Getwd()
	require.NoError(t, err)
	outside := t.TempDir()
	if trimmed() {
		t.Chdir(outside)
		_, _, err := Files()
		require.ErrorContains(t, err, "run from lectures/13-observability, or name them (-rules, -tests)")
		outside = here
	}
	for _, dir := range []string{here, filepath.Dir(here), filepath.Join(filepath.Dir(here), "cmd"), outside} {
		t.Chdir(dir)
		r, tt, err := Files()
		require.NoError(t, err, dir)
		require.FileExists(t, r)
		require.FileExists(t, tt)
		require.Equal(t, RulesFile, filepath.Base(r))
		require.Equal(t, TestsFile, filepath.Base(tt))
	}
	t.Chdir(filepath.Dir(here))
	r, _, err := Files()
	require.NoError(t, err)
	require.Equal(t, filepath.Join("rules", RulesFile), r, "relative to the lecture folder")
}

func TestDurationsAsPrometheusWritesThem(t *testing.T) {
	for s, d := range map[string]time.Duration{
		"0s": 0, "15s": 15 * time.Second, "1m": time.Minute, "1m30s": 90 * time.Second,
		"2h": 2 * time.Hour, "1d": 24 * time.Hour, "500ms": 500 * time.Millisecond,
	} {
		got, err := ParseDuration(s)
		require.NoError(t, err, s)
		require.Equal(t, d, got, s)
	}
	for _, bad := range []string{"", "15", "1.5s", "1s1m", "-1s"} {
		_, err := ParseDuration(bad)
		require.Error(t, err, bad)
	}
	require.Equal(t, "1m30s", FormatDuration(90*time.Second))
	require.Equal(t, "0s", FormatDuration(0))
	require.Equal(t, "15s", FormatDuration(15*time.Second))
	require.Equal(t, "1d2h", FormatDuration(26*time.Hour))
	require.Equal(t, "1s500ms", FormatDuration(1500*time.Millisecond))
}

// trimmed reports whether this binary was built with -trimpath.
func trimmed() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-trimpath" {
			return s.Value == "true"
		}
	}
	return false
}

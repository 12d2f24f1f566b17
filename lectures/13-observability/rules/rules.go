// Package rules is Brew's alert rules and their unit tests: the rule file
// Prometheus loads (brew-alerts.yml, beside this file), and promtool's unit
// tests of it (brew-alerts_test.yml). It reads both files, and Run has
// Prometheus' own promtool check the rules and run the tests, with a verdict
// for each test group and each alert; cmd/rules prints them.
package rules

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The lecture's files, in this folder.
const (
	RulesFile = "brew-alerts.yml"
	TestsFile = "brew-alerts_test.yml"
)

// Alert is one alerting rule of a rule file.
type Alert struct {
	Name        string
	Expr        string
	For         time.Duration // how long Expr must hold before it fires (pending until then)
	Labels      map[string]string
	Annotations map[string]string
	// Comment is the comment above the rule, without its '#'s, in one line.
	Comment string
	Group   string // the rule group it is in
	Line    int    // in the file
}

// Severity is the alert's severity label: page or ticket.
func (a Alert) Severity() string { return a.Labels["severity"] }

// ShortExpr is the expression on one line, cut to at most width characters
// (with "…" when cut).
func (a Alert) ShortExpr(width int) string {
	s := strings.Join(strings.Fields(a.Expr), " ")
	if r := []rune(s); len(r) > width && width > 1 {
		s = string(r[:width-1]) + "…"
	}
	return s
}

// RuleFile is a Prometheus rule file's alerts, in the file's order.
type RuleFile struct {
	Path   string
	Groups []RuleGroup
	Alerts []Alert
}

// RuleGroup is a rule group: its name, and its evaluation interval (0: the
// server's evaluation_interval).
type RuleGroup struct {
	Name     string
	Interval time.Duration
	Rules    int // alerting and recording rules
}

// Alert returns the alert of that name, and whether there is one.
func (f *RuleFile) Alert(name string) (Alert, bool) {
	for _, a := range f.Alerts {
		if a.Name == name {
			return a, true
		}
	}
	return Alert{}, false
}

// LoadRules reads a rule file. It does not check PromQL: promtool does
// (Run).
func LoadRules(path string) (*RuleFile, error) {
	doc, err := readYAML(path)
	if err != nil {
		return nil, err
	}
	var top struct {
		Groups []yaml.Node `yaml:"groups"`
	}
	if err := doc.Decode(&top); err != nil {
		return nil, fmt.Errorf("%s is not a Prometheus rule file (a map with groups:): %s", path, oneLine(err))
	}
	f := &RuleFile{Path: path}
	for _, gn := range top.Groups {
		var g struct {
			Name     string      `yaml:"name"`
			Interval string      `yaml:"interval"`
			Rules    []yaml.Node `yaml:"rules"`
		}
		if err := gn.Decode(&g); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, gn.Line, err)
		}
		var rg RuleGroup
		rg.Name, rg.Rules = g.Name, len(g.Rules)
		if g.Interval != "" {
			if rg.Interval, err = ParseDuration(g.Interval); err != nil {
				return nil, fmt.Errorf("%s:%d: group %s: interval: %w", path, gn.Line, g.Name, err)
			}
		}
		f.Groups = append(f.Groups, rg)
		for _, rn := range g.Rules {
			var r struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			}
			if err := rn.Decode(&r); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, rn.Line, err)
			}
			if r.Alert == "" {
				continue // a recording rule
			}
			a := Alert{
				Name: r.Alert, Expr: strings.TrimSpace(r.Expr), Labels: r.Labels, Annotations: r.Annotations,
				Comment: commentText(rn.HeadComment), Group: g.Name, Line: rn.Line,
			}
			if r.For != "" {
				if a.For, err = ParseDuration(r.For); err != nil {
					return nil, fmt.Errorf("%s:%d: alert %s: for: %w", path, rn.Line, r.Alert, err)
				}
			}
			f.Alerts = append(f.Alerts, a)
		}
	}
	if len(f.Groups) == 0 {
		return nil, fmt.Errorf("%s: no rule groups (a rule file is `groups:` with a list of groups)", path)
	}
	return f, nil
}

// commentText is a YAML comment block as one line of text.
func commentText(c string) string {
	var words []string
	for _, l := range strings.Split(c, "\n") {
		words = append(words, strings.Fields(strings.TrimLeft(strings.TrimSpace(l), "#"))...)
	}
	return strings.Join(words, " ")
}

// TestFile is a promtool unit test file (promtool test rules).
type TestFile struct {
	Path               string
	RuleFiles          []string      // as the file names them, relative to it
	EvaluationInterval time.Duration // 0: promtool's default, 1m
	Groups             []TestGroup
	doc                *yaml.Node
}

// TestGroup is one test group: input series and the checks on them.
type TestGroup struct {
	Index    int    // 1, 2, … in the file
	Name     string // its name: field, if any
	Interval time.Duration
	Series   int // input series
	Checks   []Check
	Line     int
	node     *yaml.Node
}

// Title is the group's name, or "test group N" when it has none.
func (g TestGroup) Title() string {
	if g.Name != "" {
		return g.Name
	}
	return "test group " + strconv.Itoa(g.Index)
}

// Alerts are the alert names the group checks, in their first check's order.
func (g TestGroup) Alerts() []string {
	var names []string
	seen := map[string]bool{}
	for _, c := range g.Checks {
		if c.Alert != "" && !seen[c.Alert] {
			seen[c.Alert] = true
			names = append(names, c.Alert)
		}
	}
	return names
}

// Check is one check of a test group: the alerts of one name firing at one
// evaluation time (alert_rule_test), or an expression's value
// (promql_expr_test, Alert empty).
type Check struct {
	Alert string
	Expr  string
	At    time.Duration
	// Firing holds the labels of each alert expected to fire; empty: the
	// alert must not fire then (pending is not firing).
	Firing []map[string]string
}

// LoadTests reads a promtool unit test file.
func LoadTests(path string) (*TestFile, error) {
	doc, err := readYAML(path)
	if err != nil {
		return nil, err
	}
	var top struct {
		RuleFiles          []string    `yaml:"rule_files"`
		EvaluationInterval string      `yaml:"evaluation_interval"`
		Tests              []yaml.Node `yaml:"tests"`
	}
	if err := doc.Decode(&top); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := &TestFile{Path: path, RuleFiles: top.RuleFiles, doc: doc}
	if top.EvaluationInterval != "" {
		if f.EvaluationInterval, err = ParseDuration(top.EvaluationInterval); err != nil {
			return nil, fmt.Errorf("%s: evaluation_interval: %w", path, err)
		}
	}
	for i, tn := range top.Tests {
		var t struct {
			Name        string `yaml:"name"`
			Interval    string `yaml:"interval"`
			InputSeries []struct {
				Series string `yaml:"series"`
			} `yaml:"input_series"`
			AlertRuleTest []struct {
				EvalTime  string `yaml:"eval_time"`
				Alertname string `yaml:"alertname"`
				ExpAlerts []struct {
					ExpLabels map[string]string `yaml:"exp_labels"`
				} `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
			PromqlExprTest []struct {
				Expr     string `yaml:"expr"`
				EvalTime string `yaml:"eval_time"`
			} `yaml:"promql_expr_test"`
		}
		if err := tn.Decode(&t); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, tn.Line, err)
		}
		g := TestGroup{Index: i + 1, Name: t.Name, Series: len(t.InputSeries), Line: tn.Line, node: &top.Tests[i]}
		if t.Interval != "" {
			if g.Interval, err = ParseDuration(t.Interval); err != nil {
				return nil, fmt.Errorf("%s:%d: interval: %w", path, tn.Line, err)
			}
		}
		for _, a := range t.AlertRuleTest {
			at, err := ParseDuration(a.EvalTime)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: alert %s: eval_time: %w", path, g.Title(), a.Alertname, err)
			}
			c := Check{Alert: a.Alertname, At: at}
			for _, e := range a.ExpAlerts {
				c.Firing = append(c.Firing, e.ExpLabels)
			}
			g.Checks = append(g.Checks, c)
		}
		for _, e := range t.PromqlExprTest {
			at, err := ParseDuration(e.EvalTime)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: expr %s: eval_time: %w", path, g.Title(), e.Expr, err)
			}
			g.Checks = append(g.Checks, Check{Expr: e.Expr, At: at})
		}
		f.Groups = append(f.Groups, g)
	}
	if len(f.Groups) == 0 {
		return nil, fmt.Errorf("%s: no test groups (a promtool test file has `tests:` with a list of groups)", path)
	}
	return f, nil
}

// Checks counts the file's checks.
func (f *TestFile) Checks() int {
	n := 0
	for _, g := range f.Groups {
		n += len(g.Checks)
	}
	return n
}

func readYAML(path string) (*yaml.Node, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s is not YAML: %s", path, oneLine(err))
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty", path)
	}
	return &doc, nil
}

var durationRe = regexp.MustCompile(`^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$`)

// ParseDuration reads a duration as Prometheus writes them: 15s, 1m30s, 2h,
// 1d, 500ms (a year is 365 days, a week 7).
func ParseDuration(s string) (time.Duration, error) {
	m := durationRe.FindStringSubmatch(s)
	if m == nil || s == "" {
		return 0, fmt.Errorf("%q is not a Prometheus duration (15s, 1m30s, 2h, 1d)", s)
	}
	units := []time.Duration{365 * 24 * time.Hour, 7 * 24 * time.Hour, 24 * time.Hour, time.Hour, time.Minute, time.Second, time.Millisecond}
	var d time.Duration
	for i, u := range units {
		if m[i+1] != "" {
			n, err := strconv.ParseInt(m[i+1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%q: %w", s, err)
			}
			d += time.Duration(n) * u
		}
	}
	return d, nil
}

// FormatDuration writes d as Prometheus does (1m30s, 0s), to the
// millisecond.
func FormatDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	var b strings.Builder
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if n := d / u.d; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.d
		}
	}
	if b.Len() == 0 {
		return "0s"
	}
	return b.String()
}

// Files returns the lecture's rule file and test file: under rules/ of the
// working directory (the lecture folder), of a folder above it, of
// lectures/13-observability above it, or, for a program built from this
// checkout (without -trimpath, which leaves it no source folder), beside
// this package's source.
func Files() (rulesPath, testsPath string, err error) {
	var dirs []string
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			dirs = append(dirs, filepath.Join(d, "rules"), filepath.Join(d, "lectures", "13-observability", "rules"))
			if filepath.Dir(d) == d {
				break
			}
		}
		if filepath.Base(wd) == "rules" {
			dirs = append([]string{wd}, dirs...)
		}
	}
	if _, src, _, ok := runtime.Caller(0); ok {
		dirs = append(dirs, filepath.Dir(src))
	}
	for _, d := range dirs {
		r, t := filepath.Join(d, RulesFile), filepath.Join(d, TestsFile)
		if fileExists(r) && fileExists(t) {
			return relative(r), relative(t), nil
		}
	}
	return "", "", errors.New("the lecture's rules/" + RulesFile + " and rules/" + TestsFile + " are not here: run from lectures/13-observability, or name them (-rules, -tests)")
}

func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}

// relative is path relative to the working directory when it is under it.
func relative(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	if r, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// oneLine is err's text on one line: yaml lists each problem on a line of
// its own, and a program's failure is one line.
func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

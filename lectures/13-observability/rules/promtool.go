package rules

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// ErrNoPromtool says that promtool, Prometheus' own tool, is not installed.
var ErrNoPromtool = errors.New("promtool not found (on PATH or /usr/bin/promtool): it comes with Prometheus; " +
	"`make services-up S=prometheus` installs Debian's prometheus, which brings it " +
	"(or `scripts/packages install --no-recommends prometheus` at the repository's root)")

// Promtool returns the promtool to run: the one on PATH, else Debian's
// /usr/bin/promtool, else ErrNoPromtool.
func Promtool() (string, error) {
	if p, err := exec.LookPath("promtool"); err == nil {
		return p, nil
	}
	if fileExists(debianPromtool) {
		return debianPromtool, nil
	}
	return "", ErrNoPromtool
}

// debianPromtool is where Debian's prometheus package puts promtool.
var debianPromtool = "/usr/bin/promtool"

// runBound bounds one promtool run (a test file takes well under a second).
const runBound = time.Minute

// Result is what promtool said of a rule file and its tests.
type Result struct {
	Promtool string // the binary run
	Rules    *RuleFile
	Tests    *TestFile
	// Check is `promtool check rules`: the file parses, every expression is
	// valid PromQL, every template is valid.
	Check Step
	// Test is `promtool test rules`, run only when Check passed.
	Test Step
	// Groups are Test's verdicts per test group, in the file's order (nil
	// when it did not run). When the file fails, each group is run alone to
	// tell which fail and why.
	Groups []GroupResult
}

// Step is one promtool run.
type Step struct {
	Ran    bool
	Passed bool
	Output string // what it printed, trimmed
}

// GroupResult is promtool's verdict on one test group.
type GroupResult struct {
	TestGroup
	Passed bool
	// Messages are promtool's lines about its failures: which alert at which
	// time, what it expected and what it got.
	Messages []string
}

// Failed reports whether promtool named alert among the group's failures:
// a failure about it (alertname: NAME), or one it cannot pin on an alert.
func (g GroupResult) Failed(alert string) bool {
	if g.Passed {
		return false
	}
	named := false
	for _, m := range g.Messages {
		if sub := alertnameRe.FindStringSubmatch(m); sub != nil {
			named = true
			if sub[1] == alert {
				return true
			}
		}
	}
	return !named // a failure with no alert named (a bad series): every alert of the group
}

var alertnameRe = regexp.MustCompile(`alertname: ([^,\s]+), time:`)

// Passed reports whether the rules passed promtool's check and every test.
func (r *Result) Passed() bool { return r.Check.Passed && r.Test.Passed }

// Checks counts the test file's checks.
func (r *Result) Checks() int { return r.Tests.Checks() }

// AlertResult is the verdict on one alert: the test groups and checks about
// it, and whether any failed.
type AlertResult struct {
	Name     string
	InRules  bool // defined in the rule file (false: only tested)
	Groups   int  // test groups that check it
	Checks   int  // its checks
	Firing   int  // of which expect it to fire
	Passed   bool
	Messages []string // promtool's, from the groups where it failed
}

// Alerts is the verdict on each alert: the rule file's, in its order, then
// any the tests check that the file does not define. Before the tests have
// run (Check failed), no alert has passed.
func (r *Result) Alerts() []AlertResult {
	var out []AlertResult
	index := map[string]int{}
	add := func(name string) *AlertResult {
		if i, ok := index[name]; ok {
			return &out[i]
		}
		index[name] = len(out)
		out = append(out, AlertResult{Name: name, Passed: r.Test.Ran})
		return &out[len(out)-1]
	}
	for _, a := range r.Rules.Alerts {
		add(a.Name).InRules = true
	}
	for i, g := range r.Tests.Groups {
		for _, name := range g.Alerts() {
			a := add(name)
			a.Groups++
			if i < len(r.Groups) && r.Groups[i].Failed(name) {
				a.Passed = false
				a.Messages = append(a.Messages, r.Groups[i].Messages...)
			}
		}
		for _, c := range g.Checks {
			if c.Alert == "" {
				continue
			}
			a := add(c.Alert)
			a.Checks++
			if len(c.Firing) > 0 {
				a.Firing++
			}
		}
	}
	for i := range out {
		if out[i].Checks == 0 {
			out[i].Passed = false // an alert no test checks has not passed anything
		}
	}
	return out
}

// Run has promtool check the rule file, then run the test file's unit
// tests on it (in place of the rule file the tests name: rulesPath is what
// is tested). The error is for what kept promtool from judging (no
// promtool, a file it cannot read); its verdicts are in the Result.
func Run(ctx context.Context, rulesPath, testsPath string) (*Result, error) {
	bin, err := Promtool()
	if err != nil {
		return nil, err
	}
	r := &Result{Promtool: bin}
	if r.Rules, err = LoadRules(rulesPath); err != nil {
		return nil, err
	}
	if r.Tests, err = LoadTests(testsPath); err != nil {
		return nil, err
	}
	if n := len(r.Tests.RuleFiles); n != 1 {
		return nil, fmt.Errorf("%s names %d rule files (rule_files): these tests are run on one, %s", testsPath, n, rulesPath)
	}
	absRules, err := filepath.Abs(rulesPath)
	if err != nil {
		return nil, err
	}

	out, ok, err := promtool(ctx, bin, "check", "rules", rulesPath)
	if err != nil {
		return nil, err
	}
	r.Check = Step{Ran: true, Passed: ok, Output: out}
	if !ok {
		return r, nil
	}

	dir, err := os.MkdirTemp("", "brew-rules-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// The tests beside the rules under test, naming them by absolute path.
	whole := filepath.Join(dir, filepath.Base(testsPath))
	if err := r.Tests.write(whole, absRules, nil); err != nil {
		return nil, err
	}
	out, ok, err = promtool(ctx, bin, "test", "rules", whole)
	if err != nil {
		return nil, err
	}
	r.Test = Step{Ran: true, Passed: ok, Output: strings.ReplaceAll(out, whole, testsPath)}
	r.Groups = make([]GroupResult, len(r.Tests.Groups))
	for i, g := range r.Tests.Groups {
		r.Groups[i] = GroupResult{TestGroup: g, Passed: ok}
	}
	if ok {
		return r, nil
	}
	if r.attribute(out, whole) {
		return r, nil
	}
	if err := r.eachGroupAlone(ctx, bin, dir, absRules); err != nil {
		return nil, err
	}
	return r, nil
}

// eachGroupAlone runs each test group alone, two at once (for small
// machines), to tell which failed and why.
func (r *Result) eachGroupAlone(ctx context.Context, bin, dir, absRules string) error {
	var wg sync.WaitGroup
	errs := make([]error, len(r.Groups))
	sem := make(chan struct{}, 2)
	for i := range r.Groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			one := filepath.Join(dir, fmt.Sprintf("group-%d.yml", i+1))
			if errs[i] = r.Tests.write(one, absRules, &r.Tests.Groups[i]); errs[i] != nil {
				return
			}
			out, ok, err := promtool(ctx, bin, "test", "rules", one)
			if errs[i] = err; err == nil {
				r.Groups[i].Passed = ok
				if !ok {
					r.Groups[i].Messages = failureLines(out, one)
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// attribute sorts promtool's failures into the groups they are about, by
// the "name: GROUP," line promtool puts before each failure of a named
// group. It reports false when it cannot: a group without a name, two of the
// same name, or a failure of no group (the groups are then run alone).
func (r *Result) attribute(out, file string) bool {
	byName := map[string]int{}
	for i, g := range r.Tests.Groups {
		if _, dup := byName[g.Name]; g.Name == "" || dup {
			return false
		}
		byName[g.Name] = i
	}
	lines := failureLines(out, file)
	msgs := make([][]string, len(r.Groups))
	current := -1
	for _, l := range lines {
		if name, ok := strings.CutPrefix(strings.TrimSpace(l), "name: "); ok {
			if i, known := byName[strings.TrimSuffix(name, ",")]; known {
				current = i
				continue
			}
		}
		if current < 0 {
			return false
		}
		msgs[current] = append(msgs[current], l)
	}
	if current < 0 {
		return false
	}
	for i := range r.Groups {
		r.Groups[i].Passed = len(msgs[i]) == 0
		r.Groups[i].Messages = dedent(msgs[i])
	}
	return true
}

// promtool runs bin with args and returns its output and whether it
// passed (exit 0). The error is for a run that did not happen or was cut.
func promtool(ctx context.Context, bin string, args ...string) (string, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, runBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := strings.TrimSpace(out.String())
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return text, false, fmt.Errorf("promtool %s: %w", strings.Join(args, " "), ctx.Err())
	case errors.As(err, &exit):
		return text, false, nil
	case err != nil:
		return text, false, fmt.Errorf("running %s: %w", bin, err)
	}
	return text, true, nil
}

// failureLines are promtool's lines about failures: without its header
// (Unit Testing: FILE), the FAILED line and blank lines, with the temporary
// file's name left out.
func failureLines(out, file string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || t == "FAILED:" || strings.HasPrefix(t, "Unit Testing:") {
			continue
		}
		lines = append(lines, strings.TrimRight(strings.ReplaceAll(l, file+": ", ""), " "))
	}
	return dedent(lines)
}

// dedent removes the indentation the lines share.
func dedent(lines []string) []string {
	indent := -1
	for _, l := range lines {
		if n := len(l) - len(strings.TrimLeft(l, " ")); indent < 0 || n < indent {
			indent = n
		}
	}
	for i := range lines {
		lines[i] = lines[i][indent:]
	}
	return lines
}

// write writes the test file to path with rule_files naming rules alone,
// and with only group g when g is not nil.
func (f *TestFile) write(path, rules string, g *TestGroup) error {
	top := f.doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: not a mapping", f.Path)
	}
	out := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		switch k.Value {
		case "rule_files":
			v = &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: rules}}}
		case "tests":
			if g != nil {
				v = &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{g.node}}
			}
		}
		out.Content = append(out.Content, k, v)
	}
	b, err := yaml.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

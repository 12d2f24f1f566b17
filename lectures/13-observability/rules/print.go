package rules

import (
	"fmt"
	"io"
	"strings"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// ExprWidth is how much of an expression the rule table shows.
const ExprWidth = 64

// PrintRules prints the rule file's alerts, one a row:
//
//	ALERT               FOR  SEVERITY  EXPR
//	BrewGroupLagTooOld  15s  page      max by (group) (brew_group_lag_seconds) > 30
func PrintRules(w io.Writer, f *RuleFile) {
	var groups []string
	for _, g := range f.Groups {
		s := g.Name
		if g.Interval > 0 {
			s += " (every " + FormatDuration(g.Interval) + ")"
		}
		groups = append(groups, s)
	}
	fmt.Fprintf(w, "%s: %d alerts, group %s\n", f.Path, len(f.Alerts), strings.Join(groups, ", "))
	t := brewkit.NewTable(w, "ALERT", "FOR", "SEVERITY", "EXPR")
	for _, a := range f.Alerts {
		sev := a.Severity()
		if sev == "" {
			sev = "-"
		}
		t.Row(a.Name, FormatDuration(a.For), sev, a.ShortExpr(ExprWidth))
	}
	t.Flush()
}

// PrintResult prints promtool's verdicts: the check of the rule file, then
// each alert's tests (test groups, checks, of which expect it firing), and
// a last line with the totals:
//
//	promtool: 8 alerts, 41 checks passed
//
// A failed alert is followed by promtool's lines on what it expected and
// what it got.
func PrintResult(w io.Writer, r *Result) {
	fmt.Fprintf(w, "promtool check rules %s: ", r.Rules.Path)
	if !r.Check.Passed {
		fmt.Fprintln(w, "FAILED")
		for _, l := range strings.Split(r.Check.Output, "\n") {
			fmt.Fprintln(w, "  "+strings.TrimSpace(l))
		}
		fmt.Fprintf(w, "promtool: the rule file does not load; no test ran\n")
		return
	}
	said := fmt.Sprintf("%d alerts, valid", len(r.Rules.Alerts))
	for _, l := range strings.Split(r.Check.Output, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "SUCCESS") {
			said = l // promtool's own: SUCCESS: 8 rules found
		}
	}
	fmt.Fprintln(w, said)
	fmt.Fprintf(w, "promtool test rules %s: %d test groups\n", r.Tests.Path, len(r.Tests.Groups))
	t := brewkit.NewTable(w, "ALERT", "GROUPS", "CHECKS", "FIRING", "RESULT")
	alerts := r.Alerts()
	failed := 0
	for _, a := range alerts {
		verdict := "passed"
		switch {
		case a.Checks == 0:
			verdict = "NOT TESTED"
		case !a.Passed:
			verdict = "FAILED"
		case !a.InRules:
			verdict = "NOT IN THE RULE FILE"
		}
		if verdict != "passed" {
			failed++
		}
		t.Row(a.Name, a.Groups, a.Checks, a.Firing, verdict)
	}
	t.Flush()
	for _, g := range r.Groups {
		if g.Passed {
			continue
		}
		fmt.Fprintf(w, "\nFAILED: %s (%s:%d)\n", g.Title(), r.Tests.Path, g.Line)
		for _, m := range g.Messages {
			fmt.Fprintln(w, "  "+m)
		}
	}
	if r.Passed() && failed == 0 {
		fmt.Fprintf(w, "promtool: %d alerts, %d checks passed\n", len(alerts), r.Checks())
		return
	}
	if !r.Passed() && failed == 0 {
		fmt.Fprintf(w, "\n%s\n", r.Test.Output)
	}
	fmt.Fprintf(w, "promtool: %d of %d alerts FAILED (%d checks)\n", failed, len(alerts), r.Checks())
}

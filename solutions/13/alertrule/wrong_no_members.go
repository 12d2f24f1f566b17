// A plausible wrong solution of exercise 13/alertrule: the age by group,
// "and a group with no members processes nothing, so it is stuck too". The
// nightly reports group has no member between its runs and nothing to
// process: it pages every night. The grader must fail it.
package alertrule

import (
	"fmt"
	"time"
)

type Rule struct {
	Alert  string
	Expr   string
	For    time.Duration
	Labels map[string]string
}

func StuckGroup(maxAge, hold time.Duration) Rule {
	return Rule{
		Alert: "BrewGroupStuck",
		Expr: fmt.Sprintf("max by (group) (brew_group_lag_seconds) > %g or max by (group) (brew_group_members) == 0",
			maxAge.Seconds()),
		For:    hold,
		Labels: map[string]string{"severity": "page"},
	}
}

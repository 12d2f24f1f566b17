// A plausible wrong solution of exercise 13/alertrule: the age by group,
// averaged over its partitions. When one of the kitchen's three members
// hangs, its partition's orders wait while the other two are fresh: the
// average stays under maxAge long after those orders are. The grader must
// fail it.
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
		Alert:  "BrewGroupStuck",
		Expr:   fmt.Sprintf("avg by (group) (brew_group_lag_seconds) > %g", maxAge.Seconds()),
		For:    hold,
		Labels: map[string]string{"severity": "page"},
	}
}

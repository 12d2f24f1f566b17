// A plausible wrong solution of exercise 13/alertrule: the age right, but
// max over everything: one alert for the whole cluster, with no group label
// to tell on-call which service is stuck. The grader must fail it.
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
		Expr:   fmt.Sprintf("max(brew_group_lag_seconds) > %g", maxAge.Seconds()),
		For:    hold,
		Labels: map[string]string{"severity": "page"},
	}
}

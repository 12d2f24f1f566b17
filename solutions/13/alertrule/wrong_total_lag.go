// A plausible wrong solution of exercise 13/alertrule: "a group is stuck
// when it owes more than maxAge worth of orders", the till's 20 a second.
// It counts records, not their age: it pages at the lunch rush, when the
// kitchen owes thousands of records it works through in seconds, and sleeps
// through two orders stuck for minutes at night. The grader must fail it.
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
		Expr:   fmt.Sprintf("sum by (group) (brew_group_lag_records) > %d", int(maxAge.Seconds()*20)),
		For:    hold,
		Labels: map[string]string{"severity": "page"},
	}
}

// The reference solution of exercise 13/alertrule: the age of a group is its
// oldest partition's (max by (group)), and the exporter's age is 0 where
// there is nothing to process, so idle groups and groups that keep up never
// reach maxAge.
package alertrule

import (
	"fmt"
	"time"
)

// Rule is one Prometheus alerting rule, as a rule file holds it.
type Rule struct {
	Alert  string
	Expr   string
	For    time.Duration
	Labels map[string]string
}

// StuckGroup returns the rule that pages when a consumer group's oldest
// unprocessed record has been older than maxAge for hold.
func StuckGroup(maxAge, hold time.Duration) Rule {
	return Rule{
		Alert:  "BrewGroupStuck",
		Expr:   fmt.Sprintf("max by (group) (brew_group_lag_seconds) > %g", maxAge.Seconds()),
		For:    hold,
		Labels: map[string]string{"severity": "page"},
	}
}

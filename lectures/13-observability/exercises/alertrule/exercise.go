// Package alertrule is exercise 13/alertrule: page when a consumer group's oldest unprocessed record is too old.
//
// Graded on: any stand.
// Needs: prometheus.
//
// Brew's on-call wants to be woken when a consumer group falls behind in
// time: an order placed maxAge ago that the kitchen (or the courier, or
// analytics) has not processed yet. Write StuckGroup: the Prometheus
// alerting rule that pages (severity page) when a group's oldest unprocessed
// record is older than maxAge, once that has held for hold. It fires for
// every group separately, with the group label, whether the group is stuck
// on all its partitions or on one (one of its members hung); and never for
// a group that keeps up, however many records it owes at the lunch rush, nor
// for a group that is merely idle with nothing to process. The lag exporter
// (job brew-lag, lecture 13's `make lag-exporter`) gives, per group, topic
// and partition, brew_group_lag_records (records not processed yet) and
// brew_group_lag_seconds (the age of the oldest of them, 0 with nothing to
// process), and per group brew_group_members. The grader needs no cluster,
// only promtool (`make services-up S=prometheus` installs it): it writes
// your rule into a rule file and runs promtool unit tests of its own on
// realistic series (a healthy afternoon, idle groups at night, the lunch
// rush, a group stuck at night on two orders, a kitchen with one hung
// member), for two maxAge and hold.
package alertrule

import "time"

// Rule is one Prometheus alerting rule, as a rule file holds it:
//
//   - alert: NAME
//     expr: EXPR
//     for: FOR
//     labels: {severity: page}
type Rule struct {
	Alert  string            // the alert's name: letters, digits and _ (BrewGroupStuck)
	Expr   string            // PromQL; the alert fires once per series it returns, with its labels
	For    time.Duration     // how long Expr must hold before the alert fires (until then it is pending)
	Labels map[string]string // labels added to the alert
}

// StuckGroup returns the rule that pages when a consumer group's oldest
// unprocessed record has been older than maxAge for hold.
func StuckGroup(maxAge, hold time.Duration) Rule {
	// TODO: the name, the expression, for and the severity.
	return Rule{}
}

package firedrill

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// This file is the harness that times a step: it polls Prometheus' alerts
// after the fault until every expected one fires (noting those the step did
// not expect), and after the fix until they resolve. Which fault fires which
// alert is the steps' table in drill.go.

// waitFiring polls the alerts from res.FaultAt until every expected one
// fires, at most fireIn, and notes when each was pending and firing.
func (d *run) waitFiring(ctx context.Context, prom *Prom, res *StepResult, fireIn time.Duration) error {
	seen := map[string]bool{}
	fired := func() bool {
		for _, t := range res.Timings {
			if !t.Fired() {
				return false
			}
		}
		return true
	}
	for !fired() && time.Since(res.FaultAt) < fireIn {
		alerts, err := prom.Alerts(ctx)
		if err != nil {
			return err
		}
		at := time.Since(res.FaultAt)
		for i, t := range res.Timings {
			if t.Pending > 0 && !t.Fired() && !slices.ContainsFunc(alerts, t.Expect.matches) {
				res.Timings[i].Reset = append(res.Timings[i].Reset, at)
				res.Timings[i].Pending = 0 // PENDING: when it last went pending
				d.say(fmt.Sprintf("  %s no longer pending after %ss: its for: starts again", t.Expect, secs(at)))
				continue
			}
			for _, a := range alerts {
				if !t.Expect.matches(a) {
					continue
				}
				if res.Timings[i].Pending == 0 {
					res.Timings[i].Pending = at
				}
				if a.State == "firing" && res.Timings[i].Firing == 0 {
					res.Timings[i].Firing = at
					d.say(fmt.Sprintf("  %s firing after %ss", t.Expect, secs(at)))
					if t.Expect.Alert == "BrewOfflinePartitions" {
						if res.Controllers, err = controllersSeen(ctx, prom); err != nil {
							return err
						}
					}
				}
			}
		}
		for _, u := range unexpected(alerts, res.Step, d.group) {
			if !seen[u] {
				seen[u] = true
				res.Unexpected = append(res.Unexpected, u)
				res.Notes = append(res.Notes, unexpectedNote(ctx, d.adm, u, at))
			}
		}
		if err := brewkit.Sleep(ctx, poll); err != nil {
			return err
		}
	}
	if !fired() {
		d.say(fmt.Sprintf("  not every alert fired within %s", fireIn))
	}
	return nil
}

// waitResolved polls the alerts from res.FixAt until every expected one
// has resolved and no alert of ours is left, at most resolveIn, and notes
// when each resolved.
func (d *run) waitResolved(ctx context.Context, prom *Prom, res *StepResult, resolveIn time.Duration) error {
	for time.Since(res.FixAt) < resolveIn {
		alerts, err := prom.Alerts(ctx)
		if err != nil {
			return err
		}
		at := time.Since(res.FixAt)
		left := 0
		for i, t := range res.Timings {
			if t.Resolved > 0 {
				continue
			}
			if slices.ContainsFunc(alerts, t.Expect.matches) {
				left++
				continue
			}
			if t.Fired() {
				res.Timings[i].Resolved = at
				d.say(fmt.Sprintf("  %s resolved %ss after the fix", t.Expect, secs(at)))
			}
		}
		if left == 0 && !slices.ContainsFunc(alerts, func(a Alert) bool { return ours(a, d.group) }) {
			return nil
		}
		if err := brewkit.Sleep(ctx, poll); err != nil {
			return err
		}
	}
	var still []string
	alerts, _ := prom.Alerts(ctx)
	for _, a := range alerts {
		if ours(a, d.group) {
			still = append(still, a.Name+labelsNote(a)+" "+a.State)
		}
	}
	if len(still) > 0 {
		d.say(fmt.Sprintf("  still active %s after the fix: %s", resolveIn, strings.Join(still, ", ")))
	}
	return nil
}

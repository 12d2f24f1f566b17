package scale

import (
	"context"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/analytics"
	"github.com/brew-course/kafka/lectures/14-stream-processing/recount"
	"github.com/brew-course/kafka/lectures/14-stream-processing/store"
	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
	"github.com/brew-course/kafka/lectures/14-stream-processing/window"
)

// This file is the harness that checks a run: what the orders written
// were meant to be, and the windows the instances left in the changelog
// held to the batch recount of the orders. The instances' Kafka calls are
// in package analytics, the demo's in scale.go.

// written is what the orders are: how many, what the till meant each to
// be, and their cents.
func written(orders []till.Order) till.Written {
	var w till.Written
	for _, o := range orders {
		w.Orders++
		w.Meant.Count(o.Meant)
		w.Cents += o.Cents
	}
	return w
}

// verify recounts the orders of svc.In as a batch and holds the windows
// of svc.Changelog to it: how many differ, the cents counted more, and
// the orders the changelog's partitions say they judged.
func (res *Result) verify(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, svc analytics.Config) error {
	want, err := recount.Run(ctx, cfg, adm, svc.In, svc.Window)
	if err != nil {
		return err
	}
	got, parts, err := store.Materialized(ctx, cfg, adm, svc.Changelog)
	if err != nil {
		return err
	}
	res.Recount, res.Windows = want.Counts, len(want.Totals)
	differ, extra := window.Diff(want.Totals, got)
	res.Differ, res.Extra = len(differ), extra
	for _, p := range parts {
		res.Judged += p.Counts.Records
	}
	return nil
}

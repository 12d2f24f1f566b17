// Package restore measures what a restart costs the analytics service: the
// service counts the orders to the end and stops; then its partitions'
// state is restored as a new instance would restore it, once from its local
// store (only what the changelog has beyond it) and once with the local
// store deleted (the whole changelog), for changelogs of growing size. The
// state restored is compared with the state before, window by window.
package state

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/analytics"
	"github.com/brew-course/kafka/lectures/14-stream-processing/store"
	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
	"github.com/brew-course/kafka/lectures/14-stream-processing/window"
)

// Sizes are the runs' order counts: 80 shops over an hour.
var Sizes = []int{2_500, 10_000, 25_000}

// Run is one size's measurement.
type Run struct {
	Orders    int            `json:"orders"`
	Windows   int            `json:"windows"`
	Changelog int64          `json:"changelog_records"` // the changelog's end offsets, summed
	StoreMB   float64        `json:"store_mb"`
	Kept      store.Restored `json:"kept"`    // restored onto the local store
	Deleted   store.Restored `json:"deleted"` // restored with no local store
	Same      bool           `json:"same"`    // the restored state is the state before, window by window
}

// Measure runs each size on topics of its own.
func Measure(ctx context.Context, cfg brewkit.Config, sizes []int, dir string, say func(string)) ([]Run, error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var runs []Run
	for _, n := range sizes {
		r, err := measure(ctx, cfg, adm, n, dir, say)
		if err != nil {
			return runs, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

func measure(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, orders int, dir string, say func(string)) (r Run, err error) {
	r.Orders = orders
	in, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.stream.state.", Partitions: 6})
	if err != nil {
		return r, err
	}
	c := analytics.Defaults
	c.In, c.Changelog, c.Out, c.Group = in, in+"-changelog", in+"-revenue", in+".analytics"
	c.Dir, c.Idle = dir+"/"+in, 2*time.Second
	c.Batch = 500
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		drop(dctx)                                 //nolint:errcheck // leftovers are harmless
		adm.DeleteTopics(dctx, c.Changelog, c.Out) //nolint:errcheck // and so are these
		analytics.DeleteGroup(dctx, adm, c, c.ID)  //nolint:errcheck // and the group
		os.RemoveAll(c.Dir)                        //nolint:errcheck // and the local stores
		os.RemoveAll(c.Dir + ".restored")          //nolint:errcheck
	}()
	if err := analytics.Topics(ctx, adm, c); err != nil {
		return r, err
	}
	p := till.Plan{Shops: 80, Orders: orders, Minutes: 60, OutOfOrder: 0.05, TooLate: 0.02, Seed: 14}
	if _, err := till.Write(ctx, cfg, in, 6, p); err != nil {
		return r, err
	}
	say(fmt.Sprintf("%d orders: the service counts them", orders))
	if _, err := analytics.Run(ctx, cfg, c, func(string) {}); err != nil {
		return r, err
	}
	ends, err := adm.ListEndOffsets(ctx, c.Changelog)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return r, fmt.Errorf("the end of %s: %w", c.Changelog, err)
	}
	var parts []int32
	ends.Each(func(o kadm.ListedOffset) { r.Changelog += o.Offset; parts = append(parts, o.Partition) })

	// The restart that finds its local store: only what the changelog has
	// beyond it.
	db, err := store.Open(c.Dir)
	if err != nil {
		return r, err
	}
	before, _, err := db.Totals()
	if err == nil {
		r.Windows, r.StoreMB = len(before), float64(db.Size())/(1<<20)
		r.Kept, err = db.Restore(ctx, cfg, adm, c.Changelog, parts)
	}
	db.Close()
	if err != nil {
		return r, err
	}
	// The restart on a new disk: all of it.
	db, err = store.Open(c.Dir + ".restored")
	if err != nil {
		return r, err
	}
	defer db.Close()
	if r.Deleted, err = db.Restore(ctx, cfg, adm, c.Changelog, parts); err != nil {
		return r, err
	}
	after, _, err := db.Totals()
	if err != nil {
		return r, err
	}
	differ, extra := window.Diff(before, after)
	r.Same = len(differ) == 0 && extra == 0
	say(fmt.Sprintf("%d orders: %d changelog records restored in %s", orders, r.Deleted.Records, r.Deleted.Took.Round(time.Millisecond)))
	return r, nil
}

// Print writes the measurements.
func Print(w io.Writer, runs []Run) {
	t := brewkit.NewTable(w, "ORDERS", "WINDOWS", "CHANGELOG", "STORE KEPT", "TOOK", "STORE GONE", "TOOK", "RECORDS/S", "SAME")
	for _, r := range runs {
		rate := float64(r.Deleted.Records) / max(r.Deleted.Took.Seconds(), 1e-3)
		same := "yes"
		if !r.Same {
			same = "NO"
		}
		t.Row(r.Orders, r.Windows, r.Changelog, r.Kept.Records, r.Kept.Took.Round(time.Millisecond), r.Deleted.Records, r.Deleted.Took.Round(time.Millisecond), fmt.Sprintf("%.0f", rate), same)
	}
	t.Flush() //nolint:errcheck // a writer of ours
}

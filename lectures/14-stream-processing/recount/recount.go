// Package recount counts the same windows as the analytics service, in one
// batch, straight from the orders' topic: each partition read from its
// start to its end in offset order, every order judged by the same rules
// (window.Judge). No state, no crash, no rebalance: the oracle the
// streaming result is held to.
package recount

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
	"github.com/brew-course/kafka/lectures/14-stream-processing/window"
)

// Result is the batch recount of a topic.
type Result struct {
	Totals window.Totals
	Counts window.Counts           // all partitions
	Parts  map[int32]window.Counts // each partition's
	Took   time.Duration
}

// Run recounts topic's orders, up to its end at the time of the call.
func Run(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, topic string, w window.Tumbling) (Result, error) {
	start := time.Now()
	res := Result{Totals: window.Totals{}, Parts: map[int32]window.Counts{}}
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return res, fmt.Errorf("the end of %s: %w", topic, err)
	}
	stream := map[int32]time.Time{}
	var bad error
	err = brewkit.ReadTo(ctx, cfg, topic, nil, ends, 2*time.Minute, func(r *kgo.Record) {
		if bad != nil || r.Attrs.IsControl() {
			return
		}
		o, err := till.Decode(r)
		if err != nil {
			bad = err
			return
		}
		v, st := w.Judge(stream[r.Partition], o.At)
		stream[r.Partition] = st
		c := res.Parts[r.Partition]
		c.Count(v)
		res.Parts[r.Partition] = c
		res.Counts.Count(v)
		if v != window.TooLate {
			k := window.Key{Shop: o.ShopID, Start: w.Start(o.At)}
			res.Totals[k] = res.Totals[k].Add(o.Cents)
		}
	}, kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	if err == nil {
		err = bad
	}
	res.Took = time.Since(start)
	return res, err
}

// Package compaction shows log compaction on a brew.menu-style topic of
// prices keyed by product: several prices per product and a tombstone go in,
// the log cleaner runs, and what stays is the latest price of every product at
// its original offset, with the tombstoned product gone after
// delete.retention.ms.
package compaction

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Clock is the key of the records written every half second while waiting:
// they make the active segment roll, because the cleaner never touches the
// segment still being written.
const Clock = "clock"

// Configs are the topic's settings, tuned so the cleaner acts within seconds.
var Configs = map[string]string{
	"cleanup.policy":            "compact",
	"segment.ms":                "1000", // roll the active segment every second
	"min.cleanable.dirty.ratio": "0.01", // clean as soon as anything is dirty
	"min.compaction.lag.ms":     "0",    // a record may be compacted at once
	"delete.retention.ms":       "5000", // tombstones stay 5 s after cleaning
}

// Entry is one record of the log.
type Entry struct {
	Offset int64  `json:"offset"`
	Key    string `json:"key"`
	Value  string `json:"value"` // "" for a tombstone
}

// Tombstone reports whether the entry deletes its key.
func (e Entry) Tombstone() bool { return e.Value == "" }

// Result is what a run saw.
type Result struct {
	Topic          string        `json:"topic"`
	Before         []Entry       `json:"before"`
	Compacted      []Entry       `json:"compacted"` // the first look with one record per key
	After          []Entry       `json:"after"`     // once the tombstone is gone too
	CompactedAfter time.Duration `json:"compacted_after"`
	TombstoneGone  time.Duration `json:"tombstone_gone_after"`
	KeylessErr     string        `json:"keyless_error"` // producing without a key
	Simulated      bool          `json:"simulated"`
}

var prices = map[string][]string{
	"espresso":   {"150", "160", "170"},
	"cappuccino": {"250", "260", "270"},
	"latte":      {"280", "300", "320"},
	"raf":        {"310", "330"},
}

// Products are the keys, in the order they are written.
var Products = []string{"espresso", "cappuccino", "latte", "raf"}

// Deleted is the product whose tombstone is written.
const Deleted = "raf"

// Run creates a fresh compacted topic, writes the menu's price history and a
// tombstone, waits (at most limit) for the cleaner, and deletes the topic.
func Run(ctx context.Context, cfg brewkit.Config, limit time.Duration, say func(string)) (Result, error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer cl.Close()
	var res Result
	if res.Simulated, err = brewkit.IsSimulated(ctx, cl); err != nil {
		return res, err
	}
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.menu.", Partitions: 1, Configs: Configs})
	if err != nil {
		return res, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover demo topic is harmless
	res.Topic = topic

	recs, err := writeHistory(ctx, cl, res.Topic)
	if err != nil {
		return res, err
	}
	// As written: from the acknowledgements, not read back. The segment
	// rolls every second, and on a busy machine the cleaner may compact the
	// first ones before a read gets to them.
	for _, r := range recs {
		res.Before = append(res.Before, Entry{Offset: r.Offset, Key: string(r.Key), Value: string(r.Value)})
	}

	// A record without a key means nothing to a compacted topic.
	err = cl.ProduceSync(ctx, &kgo.Record{Topic: res.Topic, Value: []byte("no key")}).FirstErr()
	if err != nil {
		res.KeylessErr = err.Error()
	}

	start := time.Now()
	announced := false
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for res.TombstoneGone == 0 {
		if time.Since(start) > limit {
			return res, fmt.Errorf("the cleaner did not finish within %s (compacted: %v)", limit, res.CompactedAfter > 0)
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-tick.C:
		}
		clock := time.Now().Format(time.RFC3339Nano)
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: res.Topic, Key: []byte(Clock), Value: []byte(clock)}).FirstErr(); err != nil {
			return res, err
		}
		log, err := readAll(ctx, cfg, adm, res.Topic)
		if err != nil {
			return res, err
		}
		if !announced { // once the log reads: a refused read is the one line
			say(fmt.Sprintf("wrote %d price updates and a tombstone for %q to %s; waiting for the log cleaner", len(recs)-1, Deleted, res.Topic))
			announced = true
		}
		menu := WithoutClock(log)
		if res.CompactedAfter == 0 && OnePerKey(menu) {
			res.CompactedAfter, res.Compacted = time.Since(start), menu
			say(fmt.Sprintf("%5.1fs  compacted: one record per product; %q is a tombstone", res.CompactedAfter.Seconds(), Deleted))
		}
		if res.CompactedAfter > 0 && !slices.ContainsFunc(menu, func(e Entry) bool { return e.Key == Deleted }) {
			res.TombstoneGone, res.After = time.Since(start), menu
			say(fmt.Sprintf("%5.1fs  the tombstone of %q is gone (delete.retention.ms=%s)", res.TombstoneGone.Seconds(), Deleted, Configs["delete.retention.ms"]))
		}
	}
	return res, nil
}

// writeHistory writes every version of every price, then a tombstone, one
// record at a time: each its own batch, as price updates come.
func writeHistory(ctx context.Context, cl *kgo.Client, topic string) ([]*kgo.Record, error) {
	var recs []*kgo.Record
	for v := range 3 {
		for _, p := range Products {
			if v < len(prices[p]) {
				recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(p), Value: []byte(prices[p][v])})
			}
		}
	}
	recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(Deleted), Value: nil})
	for _, r := range recs {
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			return nil, fmt.Errorf("writing the menu: %w", err)
		}
	}
	return recs, nil
}

// OnePerKey reports whether no key appears twice.
func OnePerKey(log []Entry) bool {
	seen := map[string]bool{}
	for _, e := range log {
		if seen[e.Key] {
			return false
		}
		seen[e.Key] = true
	}
	return true
}

// WithoutClock drops the clock records.
func WithoutClock(log []Entry) []Entry {
	return slices.DeleteFunc(slices.Clone(log), func(e Entry) bool { return e.Key == Clock })
}

// Latest is the last value written per key, tombstones included.
func Latest(log []Entry) map[string]Entry {
	m := map[string]Entry{}
	for _, e := range log {
		m[e.Key] = e
	}
	return m
}

// readAll reads the partition from its log start to its end.
func readAll(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, topic string) ([]Entry, error) {
	ends, err := brewkit.EndOffsets(ctx, adm, topic)
	if err != nil {
		return nil, err
	}
	var log []Entry
	err = brewkit.ReadTo(ctx, cfg, topic, nil, ends, 30*time.Second, func(r *kgo.Record) {
		log = append(log, Entry{Offset: r.Offset, Key: string(r.Key), Value: string(r.Value)})
	})
	return log, err
}

// PrintLog writes a log as a table.
func PrintLog(w io.Writer, title string, log []Entry) {
	fmt.Fprintln(w, title)
	t := brewkit.NewTable(w, "OFFSET", "KEY", "VALUE")
	for _, e := range log {
		v := e.Value
		if e.Tombstone() {
			v = "(tombstone)"
		}
		t.Row(e.Offset, e.Key, v)
	}
	t.Flush()
}

// Print writes the before and after views.
func (r Result) Print(w io.Writer) {
	PrintLog(w, fmt.Sprintf("%s as written (cleanup.policy=compact):", r.Topic), r.Before)
	fmt.Fprintln(w)
	PrintLog(w, fmt.Sprintf("after the cleaner, %.0fs later (clock records not shown):", r.CompactedAfter.Seconds()), r.Compacted)
	fmt.Fprintln(w)
	PrintLog(w, fmt.Sprintf("after delete.retention.ms, %.0fs later:", r.TombstoneGone.Seconds()), r.After)
	fmt.Fprintf(w, "\nOffsets keep their numbers: compaction leaves gaps, it never renumbers.\n")
	if r.KeylessErr != "" {
		fmt.Fprintf(w, "A record without a key is refused by a compacted topic: %s\n", r.KeylessErr)
	} else {
		fmt.Fprintf(w, "A record without a key was accepted: the embedded simulation does not check it; real Kafka refuses it with INVALID_RECORD.\n")
	}
}

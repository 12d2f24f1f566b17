// Package keyed produces Brew orders with a chosen key and reads them back to
// show where the broker stored each one: the same key always in the same
// partition, keyless records spread across partitions in sticky batches.
package keyedproducer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/02-topics-partitions/partition"
)

// Mode is what the records are keyed by.
type Mode string

// Modes.
const (
	ByOrder Mode = "order" // order id: every order its own key
	ByShop  Mode = "shop"  // shop id: 80 keys, each shop's orders together
	NoKey   Mode = "none"  // no key: the partitioner spreads records
)

// ParseMode accepts order, shop and none.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ByOrder, ByShop, NoKey:
		return m, nil
	}
	return "", fmt.Errorf("unknown key mode %q: use order, shop or none", s)
}

// Config sets up one run.
type Config struct {
	Topic   string
	Count   int  // orders to produce
	Mode    Mode // what to key by
	Samples int  // keys whose placement is shown, each written three times
}

// Sample is one key and where its records went.
type Sample struct {
	Key       string  `json:"key"`
	Predicted int32   `json:"predicted"` // murmur2(key) % partitions
	Stored    []int32 `json:"stored"`    // the partition of each of its records, as read back
}

// Result is where the broker stored the records.
type Result struct {
	Topic      string   `json:"topic"`
	Partitions int32    `json:"partitions"`
	Mode       Mode     `json:"mode"`
	Counts     []int64  `json:"counts"`  // records per partition, read back
	Batches    int      `json:"batches"` // for keyless records: runs of consecutive records in one partition
	Samples    []Sample `json:"samples"`
	Mismatches int      `json:"mismatches"` // keyed records stored elsewhere than predicted
}

// Run produces c.Count orders with franz-go's default partitioner and reads
// every one of them back.
func Run(ctx context.Context, cfg brewkit.Config, c Config) (Result, error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer cl.Close()
	n, err := partitions(ctx, adm, c.Topic)
	if err != nil {
		return Result{}, err
	}
	from, err := brewkit.EndOffsets(ctx, adm, c.Topic)
	if err != nil {
		return Result{}, err
	}

	run := strconv.FormatUint(rand.Uint64()%1e9, 36)
	recs, sampleKeys := c.records(run)
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return Result{}, fmt.Errorf("producing to %s: %w", c.Topic, err)
	}

	read, err := readBack(ctx, cfg, adm, c.Topic, from, run)
	if err != nil {
		return Result{}, err
	}
	return tally(c, n, read, sampleKeys), nil
}

// partitions is topic's partition count. A topic created a moment ago may
// not be known yet to the broker asked; an error Kafka will not retry (no
// permission) is the answer at once.
func partitions(ctx context.Context, adm *kadm.Client, topic string) (int32, error) {
	var td kadm.TopicDetails
	var err error
	_ = brewkit.WaitFor(ctx, 5*time.Second, 200*time.Millisecond, func() bool {
		td, err = adm.ListTopics(kadm.WithAuthorizedOps(ctx), topic)
		if ke := (*kerr.Error)(nil); errors.As(err, &ke) && !ke.Retriable {
			return true
		}
		return err == nil && td[topic].Err == nil
	})
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err != nil {
		return 0, fmt.Errorf("describing topic %s: %w", topic, err)
	}
	if err := td[topic].Err; errors.Is(err, kerr.UnknownTopicOrPartition) {
		return 0, fmt.Errorf("topic %s does not exist: create the Brew topics with `make inspect`, or pass -topic", topic)
	} else if err != nil {
		return 0, fmt.Errorf("topic %s: %w", topic, err)
	}
	return int32(len(td[topic].Partitions)), nil
}

// records are c.Count orders of run, keyed as c.Mode says; the first
// c.Samples orders (when keyed) are followed by two more events each, whose
// keys sampleKeys lists.
func (c Config) records(run string) (recs []*kgo.Record, sampleKeys []string) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
	add := func(e brewkit.Event, key string) {
		e.Run, e.Seq = run, int64(len(recs)+1)
		r := e.Record(c.Topic)
		r.Key = nil
		if c.Mode != NoKey {
			r.Key = []byte(key)
		}
		recs = append(recs, r)
	}
	keyOf := func(e brewkit.Event) string {
		if c.Mode == ByShop {
			return e.ShopID
		}
		return e.OrderID
	}
	for i := range c.Count {
		e := brewkit.NewOrder(rng, int64(i+1), time.Now())
		add(e, keyOf(e))
		if i < c.Samples && c.Mode != NoKey {
			// Two more events of the same order: they follow it into its partition.
			sampleKeys = append(sampleKeys, keyOf(e))
			for _, typ := range []brewkit.EventType{brewkit.KitchenStarted, brewkit.OrderReady} {
				next := e
				next.Type, next.Items, next.Cents = typ, nil, 0
				add(next, keyOf(e))
			}
		}
	}
	return recs, sampleKeys
}

// tally counts where the records read back landed against the partition
// their keys predict (n partitions), and the batches they came in.
func tally(c Config, n int32, read []*kgo.Record, sampleKeys []string) Result {
	res := Result{Topic: c.Topic, Partitions: n, Mode: c.Mode, Counts: make([]int64, n)}
	stored := map[string][]int32{}
	last := int32(-1)
	for _, r := range read {
		res.Counts[r.Partition]++
		if r.Partition != last {
			res.Batches++
			last = r.Partition
		}
		if r.Key != nil {
			stored[string(r.Key)] = append(stored[string(r.Key)], r.Partition)
			if r.Partition != partition.ForKey(r.Key, n) {
				res.Mismatches++
			}
		}
	}
	for _, k := range sampleKeys {
		res.Samples = append(res.Samples, Sample{Key: k, Predicted: partition.ForKey([]byte(k), n), Stored: stored[k]})
	}
	return res
}

// readBack reads from the offsets in from up to today's end every record of
// this run, in the order they were written (by sequence number).
func readBack(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, topic string, from kadm.ListedOffsets, run string) ([]*kgo.Record, error) {
	to, err := brewkit.EndOffsets(ctx, adm, topic)
	if err != nil {
		return nil, err
	}
	start := map[int32]int64{}
	from.Each(func(o kadm.ListedOffset) { start[o.Partition] = o.Offset })
	type seqRec struct {
		seq int64
		r   *kgo.Record
	}
	var got []seqRec
	err = brewkit.ReadTo(ctx, cfg, topic, start, to, time.Minute, func(r *kgo.Record) {
		if e, err := brewkit.DecodeEvent(r); err == nil && e.Run == run {
			got = append(got, seqRec{e.Seq, r})
		}
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(got, func(a, b seqRec) int { return int(a.seq - b.seq) })
	out := make([]*kgo.Record, len(got))
	for i, g := range got {
		out[i] = g.r
	}
	return out, nil
}

// Print writes the distribution and the samples.
func (r Result) Print(w io.Writer) {
	var total int64
	for _, c := range r.Counts {
		total += c
	}
	by := map[Mode]string{ByOrder: "keyed by order id", ByShop: "keyed by shop id", NoKey: "without a key"}[r.Mode]
	fmt.Fprintf(w, "%d records to %s %s, %d partitions, read back from the broker:\n\n", total, r.Topic, by, r.Partitions)
	t := brewkit.NewTable(w, "PART", "RECORDS", "SHARE")
	for p, c := range r.Counts {
		share := float64(c) / float64(max(total, 1))
		t.Row(p, c, fmt.Sprintf("%5.1f%% %s", 100*share, strings.Repeat("#", int(share*40+0.5))))
	}
	t.Flush()
	if r.Mode == NoKey {
		fmt.Fprintf(w, "\nno key: franz-go's default partitioner (the Java client's too) fills one partition\n"+
			"with a batch, then moves on: %d runs of consecutive records in one partition.\n", r.Batches)
		return
	}
	fmt.Fprintf(w, "\nkeyed records stored where murmur2(key) %% %d predicts: %d of %d\n\n", r.Partitions, total-int64(r.Mismatches), total)
	t = brewkit.NewTable(w, "KEY", "PREDICTED", "STORED (3 events of one order)")
	for _, s := range r.Samples {
		t.Row(s.Key, s.Predicted, strings.Trim(fmt.Sprint(s.Stored), "[]"))
	}
	t.Flush()
}

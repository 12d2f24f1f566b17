// Package grow adds partitions to a topic and shows the price: keys that now
// map to another partition, so a key's old and new records sit in different
// partitions with no order between them. Then it asks to shrink the topic,
// which Kafka refuses.
package grow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/02-topics-partitions/partition"
)

// Config sets up one run.
type Config struct {
	From, To, ShrinkTo int32
	Keys               int // sample order ids
}

// Defaults is the lecture's run: 3 -> 6, then ask for 2.
var Defaults = Config{From: 3, To: 6, ShrinkTo: 2, Keys: 12}

// Key is one key before and after the growth, as the broker stored it.
type Key struct {
	Key    string `json:"key"`
	Before int32  `json:"before"`
	After  int32  `json:"after"`
}

// Result is what the run saw.
type Result struct {
	Topic     string `json:"topic"`
	From      int32  `json:"from"`
	To        int32  `json:"to"`
	Keys      []Key  `json:"keys"`
	Moved     int    `json:"moved"`
	ShrinkTo  int32  `json:"shrink_to"`
	ShrinkErr string `json:"shrink_error"`
	Simulated bool   `json:"simulated"`
}

// Run creates a fresh topic with c.From partitions, writes the sample keys,
// grows it to c.To, writes them again, asks to shrink it to c.ShrinkTo, and
// deletes the topic.
func Run(ctx context.Context, cfg brewkit.Config, c Config) (Result, error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer cl.Close()
	res := Result{From: c.From, To: c.To, ShrinkTo: c.ShrinkTo}
	if res.Simulated, err = brewkit.IsSimulated(ctx, cl); err != nil {
		return res, err
	}
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.grow.", Partitions: c.From})
	if err != nil {
		return res, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover demo topic is harmless
	res.Topic = topic

	keys := make([]string, c.Keys)
	for i := range keys {
		keys[i] = brewkit.OrderID(int64(i + 1))
	}
	before, err := writeKeys(ctx, cfg, res.Topic, keys)
	if err != nil {
		return res, err
	}
	if err := updatePartitions(ctx, adm, res.Topic, c.To); err != nil {
		return res, fmt.Errorf("growing %s to %d partitions: %w", res.Topic, c.To, err)
	}
	if err := waitPartitions(ctx, cl, adm, res.Topic, c.To); err != nil {
		return res, err
	}
	// A new client: it learns the new partition count from fresh metadata.
	after, err := writeKeys(ctx, cfg, res.Topic, keys)
	if err != nil {
		return res, err
	}
	for _, k := range keys {
		res.Keys = append(res.Keys, Key{Key: k, Before: before[k], After: after[k]})
		if before[k] != after[k] {
			res.Moved++
		}
	}
	err = updatePartitions(ctx, adm, res.Topic, c.ShrinkTo)
	if err == nil {
		return res, errors.New("the cluster accepted fewer partitions; Kafka never does")
	}
	res.ShrinkErr = err.Error()
	return res, nil
}

// updatePartitions asks for n partitions and returns the request's error or
// the topic's, as the broker answered it.
func updatePartitions(ctx context.Context, adm *kadm.Client, topic string, n int32) error {
	rs, err := adm.UpdatePartitions(ctx, int(n), topic)
	if err != nil {
		return err
	}
	r, err := rs.On(topic, nil)
	if err != nil {
		return err
	}
	if r.Err != nil {
		return brokerError{err: r.Err, message: r.ErrMessage}
	}
	return nil
}

// brokerError is a topic's error in a CreatePartitions answer: the code's name
// and the broker's own message. The client library's text for the code is
// left out: for INVALID_PARTITIONS it reads "Number of partitions is below 1.",
// which is not what the broker refused here.
type brokerError struct {
	err     error // the code, a *kerr.Error
	message string
}

func (e brokerError) Error() string {
	name := e.err.Error()
	var ke *kerr.Error
	if errors.As(e.err, &ke) {
		name = ke.Message
	}
	if e.message == "" {
		return name + " (the broker gave no reason)"
	}
	return name + ": " + e.message
}

func (e brokerError) Unwrap() error { return e.err }

// writeKeys writes one order per key with a new client and returns the
// partition the broker acknowledged it in.
func writeKeys(ctx context.Context, cfg brewkit.Config, topic string, keys []string) (map[string]int32, error) {
	cl, err := brewkit.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	var recs []*kgo.Record
	for i, k := range keys {
		e := brewkit.NewOrder(rng, int64(i+1), time.Now())
		e.OrderID = k
		recs = append(recs, e.Record(topic))
	}
	results := cl.ProduceSync(ctx, recs...)
	if err := results.FirstErr(); err != nil {
		return nil, fmt.Errorf("writing to %s: %w", topic, err)
	}
	out := map[string]int32{}
	for _, r := range results {
		out[string(r.Record.Key)] = r.Record.Partition
	}
	return out, nil
}

// waitPartitions waits until every broker's metadata has n partitions for
// topic: each answers from its own copy of the metadata log, and a new
// client asking one still behind would partition by the old count.
func waitPartitions(ctx context.Context, cl *kgo.Client, adm *kadm.Client, topic string, n int32) error {
	err := brewkit.WaitFor(ctx, 30*time.Second, 100*time.Millisecond, func() bool {
		brokers, err := adm.ListBrokers(ctx)
		if err != nil || len(brokers) == 0 {
			return false
		}
		for _, b := range brokers {
			req := kmsg.NewPtrMetadataRequest()
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(topic)
			req.Topics = append(req.Topics, rt)
			resp, err := req.RequestWith(ctx, cl.Broker(int(b.NodeID)))
			if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != int(n) {
				return false
			}
		}
		return brewkit.WaitTopics(ctx, adm, topic) == nil
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("%s did not show %d partitions: %w", topic, n, err)
	}
	return err
}

// Print writes the keys and the refusal.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "%s: %d -> %d partitions\n\n", r.Topic, r.From, r.To)
	t := brewkit.NewTable(w, "KEY", fmt.Sprintf("BEFORE (%d)", r.From), fmt.Sprintf("AFTER (%d)", r.To), "NOTE")
	for _, k := range r.Keys {
		note := "-"
		if k.Before != k.After {
			note = "moved"
		}
		t.Row(k.Key, k.Before, k.After, note)
	}
	t.Flush()
	fmt.Fprintf(w, "\n%d of %d keys moved to another partition. Their older records stay where they were,\n"+
		"so a consumer may read a newer event of an order before an older one.\n\n", r.Moved, len(r.Keys))
	fmt.Fprintf(w, "shrinking to %d partitions: %s\n", r.ShrinkTo, r.ShrinkErr)
	fmt.Fprintf(w, "Kafka cannot lower the count: the records of the removed partitions would have nowhere to go\n"+
		"and every key would change its partition again. Create a new topic and copy instead.\n")
}

// MovedShare is the share of keys that change partition when a topic grows
// from `from` to `to` partitions, over the given keys.
func MovedShare(keys [][]byte, from, to int32) float64 {
	moved := 0
	for _, k := range keys {
		if partition.ForKey(k, from) != partition.ForKey(k, to) {
			moved++
		}
	}
	return float64(moved) / float64(len(keys))
}

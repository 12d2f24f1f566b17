// Package queue holds what the lecture's share-group programs have in
// common: the group configuration a share group needs, the consumer options,
// and the drink tickets they take.
package queue

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// FromEarliest is the group config that makes a new share group start at
// the beginning of its topics (groupconfigs.Set sets it): a share
// group reads from the latest offset unless share.auto.offset.reset says
// earliest.
var FromEarliest = map[string]string{"share.auto.offset.reset": "earliest"}

// ShareOpts are the options of a share consumer of topic in group that
// acquires at most max records per fetch, so that records spread over the
// consumers instead of the first one taking them all.
func ShareOpts(group, topic string, max int32) []kgo.Opt {
	return []kgo.Opt{
		kgo.ShareGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ShareMaxRecords(max),
		kgo.ShareMaxRecordsStrict(),
		kgo.KeepRetryableFetchErrors(),
	}
}

// Tickets writes n drink tickets to topic, keyed by shop, and returns when
// all are acknowledged.
func Tickets(ctx context.Context, cl *kgo.Client, topic string, n int) error {
	if err := cl.ProduceSync(ctx, NewTickets(topic, 1, n)...).FirstErr(); err != nil {
		return fmt.Errorf("writing tickets to %s: %w", topic, err)
	}
	return nil
}

// NewTickets makes n drink tickets for topic, numbered from first, keyed by
// shop.
func NewTickets(topic string, first, n int) []*kgo.Record {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 8))
	recs := make([]*kgo.Record, n)
	for i := range recs {
		num := first + i
		e := brewkit.NewOrder(rng, int64(num), time.Now())
		r := e.Record(topic)
		r.Key = []byte(e.ShopID) // tickets need no order per key: any barista takes any
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: "ticket", Value: []byte(strconv.Itoa(num))})
		recs[i] = r
	}
	return recs
}

// Ticket is a record's ticket number (0 when it has none).
func Ticket(r *kgo.Record) int {
	for _, h := range r.Headers {
		if h.Key == "ticket" {
			n, _ := strconv.Atoi(string(h.Value))
			return n
		}
	}
	return 0
}

// Serve is one share consumer of topic in group: it takes up to max records
// at a time, acknowledges each with what handle returns, and sends the
// acknowledgements before the next fetch, until ctx ends or its reads fail
// (refused, or a node answers none of them within cfg.Bound).
func Serve(ctx context.Context, cfg brewkit.Config, group, topic string, max int32, handle func(*kgo.Record) kgo.AckStatus) error {
	cl, err := brewkit.NewClient(cfg, ShareOpts(group, topic, max)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	var check brewkit.FetchCheck
	for ctx.Err() == nil {
		fs, err := check.Poll(ctx, cl, int(max))
		if err != nil {
			return err
		}
		for _, r := range fs.Records() {
			r.Ack(handle(r))
		}
		if err := cl.FlushAcks(ctx); err != nil && ctx.Err() == nil {
			return fmt.Errorf("acknowledging: %w", err)
		}
	}
	return nil
}

// Package delivery shows the difference between sending and acknowledgement.
// Produce only buffers a record and returns; the broker's answer arrives
// later, in the record's promise (the delivery callback of other clients),
// and Flush waits for every answer. One record here is too large for the
// topic, so its report carries an error instead of an offset.
package delivery

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// MaxMessageBytes is the demo topic's max.message.bytes: order 3 is bigger.
// It is alone in its partition (murmur2 puts orders 1-5 in partitions 0, 4,
// 1, 4, 5), so its batch holds no other order the broker would refuse with it.
const MaxMessageBytes = 1024

// Report is one record's delivery report.
type Report struct {
	Key       string        `json:"key"`
	Bytes     int           `json:"bytes"`
	Partition int32         `json:"partition"`
	Offset    int64         `json:"offset"`
	Err       string        `json:"error,omitempty"`
	After     time.Duration `json:"after"` // from Produce to the promise
}

// Result is the run: when Produce returned for all records, then the reports.
type Result struct {
	Topic      string        `json:"topic"`
	SentIn     time.Duration `json:"sent_in"`    // all Produce calls returned
	Unanswered int           `json:"unanswered"` // reports not yet in when the last Produce returned
	FlushedIn  time.Duration `json:"flushed_in"` // Flush returned
	Reports    []Report      `json:"reports"`    // in the order the records were produced
}

// Run writes n orders (the 3rd too large) with acks=all to a fresh 6-partition topic.
func Run(ctx context.Context, cfg brewkit.Config, n int) (Result, error) {
	var res Result
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	return run(ctx, cfg, adm, n)
}

func run(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, n int) (Result, error) {
	var res Result
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.delivery.", Partitions: 6, Configs: map[string]string{"max.message.bytes": fmt.Sprint(MaxMessageBytes)}})
	if err != nil {
		return res, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover demo topic is harmless
	res.Topic = topic
	prod, err := brewkit.NewClient(cfg, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(20*time.Millisecond))
	if err != nil {
		return res, err
	}
	defer prod.Close()
	// A first write teaches the producer the new topic's leaders and gets
	// its producer id, so the reports below time the orders alone.
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("warm-up")}).FirstErr(); err != nil {
		return res, fmt.Errorf("writing to %s: %w", topic, err)
	}

	res.Reports = make([]Report, n)
	var mu sync.Mutex
	answered := 0
	start := time.Now()
	for i := range n {
		key := brewkit.OrderID(int64(i + 1))
		value := []byte(`{"order_id":"` + key + `","items":["latte"]}`)
		if i == 2 {
			// A catering order with a 2 KiB photo: random bytes, which the
			// producer's compression cannot shrink under the limit.
			value = make([]byte, 2*MaxMessageBytes)
			crand.Read(value) //nolint:errcheck // crypto/rand.Read does not fail
		}
		res.Reports[i] = Report{Key: key, Bytes: len(value)}
		sent := time.Now()
		prod.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(key), Value: value}, func(r *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			rep := &res.Reports[i]
			rep.After, rep.Partition, rep.Offset = time.Since(sent), r.Partition, r.Offset
			if err != nil {
				rep.Err, rep.Offset = err.Error(), -1
			}
			answered++
		})
	}
	res.SentIn = time.Since(start)
	mu.Lock()
	res.Unanswered = n - answered
	mu.Unlock()
	if err := prod.Flush(ctx); err != nil {
		return res, err
	}
	res.FlushedIn = time.Since(start)
	return res, nil
}

// Print writes the run the way the README shows it.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "Produce returned for %d orders in %s: %d of them not yet acknowledged\n", len(r.Reports), r.SentIn.Round(100*time.Microsecond), r.Unanswered)
	fmt.Fprintf(w, "Flush returned after %s: every order has its delivery report\n\n", r.FlushedIn.Round(time.Millisecond))
	t := brewkit.NewTable(w, "ORDER", "BYTES", "PARTITION", "OFFSET", "REPORT")
	for _, rep := range r.Reports {
		offset, report := fmt.Sprint(rep.Offset), "acknowledged after "+rep.After.Round(time.Millisecond).String()
		if rep.Err != "" {
			offset, report = "-", rep.Err
		}
		t.Row(rep.Key, rep.Bytes, rep.Partition, offset, report)
	}
	t.Flush()
}

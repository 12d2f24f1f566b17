// Package witness holds an operation on a running cluster to "nothing lost,
// nothing duplicated": while the operation runs, a producer writes numbered
// orders to a topic at a steady rate (acks=all, idempotent) and a consumer
// reads them back; at the end every order Kafka acknowledged must have been
// read exactly once. It also times the longest stretch without an
// acknowledgement: what clients felt of the operation.
package witness

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Report is what the witness saw.
type Report struct {
	Sent       int64         `json:"sent"`
	Acked      int64         `json:"acked"`
	Failed     int64         `json:"failed"` // writes Kafka refused or did not acknowledge in time: the client saw them fail
	Read       int64         `json:"read"`   // distinct orders read
	Lost       int64         `json:"lost"`   // acknowledged, never read
	Duplicated int64         `json:"duplicated"`
	LongestGap time.Duration `json:"longest_gap"` // the longest time without an acknowledgement while writing
}

// OK reports whether nothing acknowledged was lost or duplicated.
func (r Report) OK() bool { return r.Lost == 0 && r.Duplicated == 0 }

func (r Report) String() string {
	return fmt.Sprintf("sent %d, acknowledged %d, failed %d, read %d: lost %d, duplicated %d; longest wait for an acknowledgement %s",
		r.Sent, r.Acked, r.Failed, r.Read, r.Lost, r.Duplicated, r.LongestGap.Round(10*time.Millisecond))
}

// Witness is one running witness.
type Witness struct {
	topic   string
	rate    int
	prod    *kgo.Client
	cons    *kgo.Client
	stopW   context.CancelFunc // the writer
	stopR   context.CancelFunc // the reader
	writing sync.WaitGroup
	reading sync.WaitGroup
	pend    sync.WaitGroup // writes not answered yet

	mu       sync.Mutex
	sent     int64
	acked    map[int64]bool
	failed   int64
	read     map[int64]position
	dups     int64
	lastAck  time.Time
	longest  time.Duration
	consumed error
}

type position struct {
	partition int32
	offset    int64
}

// Start writes rate orders a second to topic, which must exist, and reads
// them back, until Stop.
func Start(ctx context.Context, cfg brewkit.Config, topic string, rate int) (*Witness, error) {
	w := &Witness{topic: topic, rate: rate, acked: map[int64]bool{}, read: map[int64]position{}}
	var err error
	if w.prod, err = brewkit.NewClient(cfg,
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordDeliveryTimeout(2*time.Minute),
		kgo.ProducerLinger(5*time.Millisecond),
	); err != nil {
		return nil, err
	}
	adm := kadm.NewClient(w.prod)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		w.prod.Close()
		return nil, fmt.Errorf("the witness' topic %s: %w", topic, err)
	}
	from := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) { from[o.Partition] = kgo.NewOffset().At(o.Offset) })
	if w.cons, err = brewkit.NewClient(cfg,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.KeepRetryableFetchErrors(),
	); err != nil {
		w.prod.Close()
		return nil, err
	}
	wctx, stopW := context.WithCancel(context.WithoutCancel(ctx))
	rctx, stopR := context.WithCancel(context.WithoutCancel(ctx))
	w.stopW, w.stopR = stopW, stopR
	w.lastAck = time.Now()
	w.writing.Add(1)
	w.reading.Add(1)
	go w.write(wctx)
	go w.consume(rctx)
	return w, nil
}

func (w *Witness) write(ctx context.Context) {
	defer w.writing.Done()
	tick := time.NewTicker(time.Second / time.Duration(max(w.rate, 1)))
	defer tick.Stop()
	for seq := int64(1); ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		key := binary.BigEndian.AppendUint64(nil, uint64(seq))
		w.mu.Lock()
		w.sent++
		w.mu.Unlock()
		w.pend.Add(1)
		w.prod.Produce(context.WithoutCancel(ctx), &kgo.Record{Topic: w.topic, Key: key, Value: fmt.Appendf(nil, `{"type":"OrderPlaced","seq":%d}`, seq)}, func(r *kgo.Record, err error) {
			defer w.pend.Done()
			w.mu.Lock()
			defer w.mu.Unlock()
			if err != nil {
				w.failed++
				return
			}
			now := time.Now()
			w.longest = max(w.longest, now.Sub(w.lastAck))
			w.lastAck = now
			w.acked[int64(binary.BigEndian.Uint64(r.Key))] = true
		})
	}
}

func (w *Witness) consume(ctx context.Context) {
	defer w.reading.Done()
	var check brewkit.FetchCheck
	for ctx.Err() == nil {
		fs, err := check.Poll(ctx, w.cons, 0)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			w.mu.Lock()
			w.consumed = err
			w.mu.Unlock()
			continue // a stuck node: keep reading, Stop reports what stays missing
		}
		fs.EachRecord(func(r *kgo.Record) {
			if len(r.Key) != 8 {
				return
			}
			seq := int64(binary.BigEndian.Uint64(r.Key))
			at := position{r.Partition, r.Offset}
			w.mu.Lock()
			if p, ok := w.read[seq]; ok && p != at {
				w.dups++
			} else {
				w.read[seq] = at
			}
			w.mu.Unlock()
		})
	}
}

// Now is the report so far (lost: acknowledged and not read yet).
func (w *Witness) Now() Report {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.report()
}

func (w *Witness) report() Report {
	r := Report{Sent: w.sent, Acked: int64(len(w.acked)), Failed: w.failed, Read: int64(len(w.read)), Duplicated: w.dups, LongestGap: w.longest}
	for seq := range w.acked {
		if _, ok := w.read[seq]; !ok {
			r.Lost++
		}
	}
	return r
}

// Stop stops writing, waits for every write's answer, reads until every
// acknowledged order has been read or drain passes, and reports.
func (w *Witness) Stop(drain time.Duration) Report {
	deadline := time.Now().Add(drain)
	w.stopW()
	w.writing.Wait()
	answered := make(chan struct{})
	go func() { w.pend.Wait(); close(answered) }()
	select {
	case <-answered:
	case <-time.After(time.Until(deadline)):
	}
	for time.Now().Before(deadline) && w.Now().Lost > 0 {
		time.Sleep(100 * time.Millisecond) // until the reader has caught up, or drain passes
	}
	w.stopR()
	w.reading.Wait()
	w.prod.Close()
	w.cons.Close()
	return w.Now()
}

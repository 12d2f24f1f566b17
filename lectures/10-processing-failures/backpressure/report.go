package backpressure

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/10-processing-failures/courier"
)

// This file is the harness around the courier's loop: what it tells the
// demo that runs it (samples of its queue, pauses and memory, the records it
// read, how its stop went). The Kafka calls are in courier.go.

// Report is one thing a courier tells: a sample of its state, its first
// assignment, a record it read, its stop.
type Report struct {
	Kind string `json:"kind"` // assigned, sample, read, stopped

	// sample, stopped
	Queue   int   `json:"queue"`
	Paused  bool  `json:"paused,omitempty"`
	Pauses  int   `json:"pauses,omitempty"`  // times the loop paused fetching
	Booked  int64 `json:"booked"`            // bookings the partner confirmed
	Revoked int   `json:"revoked,omitempty"` // partitions taken away while running (rebalances)
	RSS     int64 `json:"rss,omitempty"`     // VmRSS, bytes (Linux)
	PeakRSS int64 `json:"peak_rss,omitempty"`

	// assigned
	Partitions int `json:"partitions,omitempty"`

	// read
	Order     string `json:"order,omitempty"`
	Partition int32  `json:"p,omitempty"`
	Offset    int64  `json:"o,omitempty"`

	// stopped: what the graceful stop did
	Drained   int           `json:"drained,omitempty"`   // records booked after the stop began
	Abandoned int           `json:"abandoned,omitempty"` // records left unbooked when Drain ran out
	Took      time.Duration `json:"took,omitempty"`      // from the stop to the group left
}

// teller is c.Report made safe for several goroutines: one report at a time.
func (c *Courier) teller() func(Report) {
	if c.Report == nil {
		return func(Report) {}
	}
	var mu sync.Mutex
	return func(r Report) {
		mu.Lock()
		defer mu.Unlock()
		c.Report(r)
	}
}

// sample is the courier's state now, with this process's memory.
func (r *run) sample(kind string) Report {
	rss, peak := ReadRSS()
	return Report{Kind: kind, Queue: r.q.len(), Paused: r.paused.Load(), Pauses: int(r.pauses.Load()),
		Booked: r.booked.Load(), Revoked: int(r.revoked.Load()), RSS: rss, PeakRSS: peak}
}

// sampleEvery tells a sample every d (0: 100 ms) until the returned stop
// is called (more than once is fine).
func (r *run) sampleEvery(d time.Duration) (stop func()) {
	if d <= 0 {
		d = 100 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				r.tell(r.sample("sample"))
			}
		}
	})
	return sync.OnceFunc(func() { cancel(); wg.Wait() })
}

// read tells a record the loop queued, when the demo asked for them (Reads).
func (r *run) read(rec *kgo.Record) {
	if r.c.Reads {
		ev, _ := courier.Decode(rec)
		r.tell(Report{Kind: "read", Order: ev.OrderID, Partition: rec.Partition, Offset: rec.Offset})
	}
}

// stopped tells how the graceful stop that began at stopAt went.
func (r *run) stopped(stopAt time.Time) {
	rep := r.sample("stopped")
	rep.Drained = int(r.bookedAfterStop.Load())
	rep.Abandoned = int(r.abandoned.Load()) + r.q.len()
	rep.Took = time.Since(stopAt)
	r.tell(rep)
}

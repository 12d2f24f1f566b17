// Package baristas runs N consumers on one topic of drink tickets, each
// taking a ticket, working on it for a while and acknowledging it, either as
// a share group (any consumer takes any ticket) or, for contrast, as a
// consumer group (a partition belongs to one consumer at a time).
package baristas

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/08-share-groups/groupconfigs"
	"github.com/brew-course/kafka/lectures/08-share-groups/queue"
)

// Mode is how the consumers share the topic.
type Mode string

// The two modes.
const (
	Share Mode = "share" // a share group (KIP-932)
	Group Mode = "group" // a classic consumer group
)

// Config is one run.
type Config struct {
	Mode       Mode
	Consumers  int
	Partitions int32
	Tickets    int
	Work       time.Duration // per ticket
}

// Defaults: 6 baristas, 1 partition, 120 tickets of 20 ms.
var Defaults = Config{Mode: Share, Consumers: 6, Partitions: 1, Tickets: 120, Work: 20 * time.Millisecond}

// Barista is what one consumer did.
type Barista struct {
	Name    string `json:"name"`
	Tickets int    `json:"tickets"`
}

// Result is a run's outcome.
type Result struct {
	Config    Config        `json:"config"`
	Topic     string        `json:"topic"`
	Baristas  []Barista     `json:"baristas"`
	Done      int           `json:"done"`    // distinct tickets acknowledged
	Repeats   int           `json:"repeats"` // tickets processed more than once
	Elapsed   time.Duration `json:"elapsed"` // first ticket taken to last one done
	PerSecond float64       `json:"per_second"`
}

// Busy counts the baristas that got at least one ticket.
func (r Result) Busy() int {
	n := 0
	for _, b := range r.Baristas {
		if b.Tickets > 0 {
			n++
		}
	}
	return n
}

// Run writes the tickets to a fresh topic, then runs the consumers until
// every ticket is done.
func Run(ctx context.Context, cfg brewkit.Config, c Config, say func(string)) (Result, error) {
	res := Result{Config: c}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	var drop func(context.Context) error
	if res.Topic, drop, err = brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: fmt.Sprintf("brew.tickets.%s.", c.Mode), Partitions: c.Partitions}); err != nil {
		return res, err
	}
	group := res.Topic
	defer func() {
		drop(ctx) //nolint:errcheck // leftovers are harmless
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		adm.DeleteGroup(dctx, group) //nolint:errcheck // and so is the group
	}()
	if c.Mode == Share {
		if err := groupconfigs.Set(ctx, cl, group, queue.FromEarliest); err != nil {
			return res, err
		}
	}

	for i := range c.Consumers {
		res.Baristas = append(res.Baristas, Barista{Name: fmt.Sprintf("barista-%d", i+1)})
	}
	count := newCount(&res, say)
	// The first barista to fail ends the run, with its error as the cause.
	cctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var wg sync.WaitGroup
	for _, b := range res.Baristas {
		wg.Go(func() {
			if err := consume(cctx, cfg, c, group, res.Topic, func(r *kgo.Record) { count.took(b.Name, r) }); err != nil {
				stop(fmt.Errorf("%s: %w", b.Name, err))
			}
		})
	}
	// Every barista is at the counter before the first ticket: the group
	// has them all as members with an assignment.
	if err := brewkit.WaitFor(cctx, time.Minute, 100*time.Millisecond, func() bool { return allJoined(cctx, adm, c, group) }); err != nil {
		if cctx.Err() != nil {
			return res, context.Cause(cctx)
		}
		return res, fmt.Errorf("the %d baristas did not all join %s: %w", c.Consumers, group, err)
	}
	if err := queue.Tickets(ctx, cl, res.Topic, c.Tickets); err != nil {
		return res, err
	}

	if err := count.waitAllDone(cctx); err != nil {
		return res, err
	}
	stop(nil)
	wg.Wait()
	count.tally()
	return res, nil
}

// allJoined: the group has every barista as a member with partitions assigned
// (a consumer group: stable with all of them, one of them owning the partition).
func allJoined(ctx context.Context, adm *kadm.Client, c Config, group string) bool {
	if c.Mode == Share {
		d, err := adm.DescribeShareGroups(ctx, group)
		g, ok := d[group]
		if err != nil || !ok || len(g.Members) != c.Consumers {
			return false
		}
		for _, m := range g.Members {
			if len(m.Assignment) == 0 {
				return false
			}
		}
		return true
	}
	d, err := adm.DescribeGroups(ctx, group)
	g, ok := d[group]
	return err == nil && ok && g.State == "Stable" && len(g.Members) == c.Consumers
}

// consume is one barista: take a ticket, work, acknowledge it (a share
// group member) or commit its offset (a consumer group member).
func consume(ctx context.Context, cfg brewkit.Config, c Config, group, topic string, took func(*kgo.Record)) error {
	work := func(r *kgo.Record) {
		time.Sleep(c.Work)
		took(r)
	}
	if c.Mode == Share {
		return queue.Serve(ctx, cfg, group, topic, 1, func(r *kgo.Record) kgo.AckStatus {
			work(r)
			return kgo.AckAccept
		})
	}
	cl, err := brewkit.NewClient(cfg, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.KeepRetryableFetchErrors())
	if err != nil {
		return err
	}
	defer cl.Close()
	var check brewkit.FetchCheck
	for ctx.Err() == nil {
		fs, err := check.Poll(ctx, cl, 1)
		if err != nil {
			return err
		}
		for _, r := range fs.Records() {
			work(r)
			if err := cl.CommitRecords(ctx, r); err != nil && ctx.Err() == nil {
				return fmt.Errorf("committing: %w", err)
			}
		}
	}
	return nil
}

// Print writes who did what.
func (r Result) Print(w io.Writer) {
	t := brewkit.NewTable(w, "BARISTA", "TICKETS")
	for _, b := range r.Baristas {
		note := ""
		if b.Tickets == 0 {
			note = "  idle"
		}
		t.Row(b.Name, fmt.Sprint(b.Tickets)+note)
	}
	t.Flush()
	fmt.Fprintf(w, "%d tickets done by %d of %d baristas in %s; throughput %.0f tickets/s\n",
		r.Done, r.Busy(), len(r.Baristas), r.Elapsed.Round(10*time.Millisecond), r.PerSecond)
}

// Table runs every mode with each consumer count on a one-partition topic.
func Table(ctx context.Context, cfg brewkit.Config, base Config, counts []int, say func(string)) ([]Result, error) {
	var out []Result
	for _, m := range []Mode{Share, Group} {
		for _, n := range counts {
			c := base
			c.Mode, c.Consumers, c.Partitions = m, n, 1
			r, err := Run(ctx, cfg, c, say)
			if err != nil {
				return out, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// CSVHeader is the first line WriteCSV writes: the columns the chart reads.
var CSVHeader = []string{"mode", "consumers", "busy", "tickets", "elapsed_ms", "tickets_per_s"}

// WriteCSV writes the throughput table as CSV, one row per run.
func WriteCSV(w io.Writer, rs []Result) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader) //nolint:errcheck // Flush reports it
	for _, r := range rs {
		cw.Write([]string{ //nolint:errcheck // Flush reports it
			string(r.Config.Mode), strconv.Itoa(r.Config.Consumers), strconv.Itoa(r.Busy()), strconv.Itoa(r.Done),
			strconv.FormatInt(r.Elapsed.Milliseconds(), 10), strconv.FormatFloat(r.PerSecond, 'f', 1, 64),
		})
	}
	cw.Flush()
	return cw.Error()
}

// PrintTable writes the throughput table.
func PrintTable(w io.Writer, rs []Result) {
	t := brewkit.NewTable(w, "MODE", "CONSUMERS", "BUSY", "TICKETS", "ELAPSED", "TICKETS/S")
	for _, r := range rs {
		t.Row(r.Config.Mode, r.Config.Consumers, r.Busy(), r.Done, r.Elapsed.Round(10*time.Millisecond), fmt.Sprintf("%.0f", r.PerSecond))
	}
	t.Flush()
}

// Package poison shows how a share group stops a poison message: a ticket
// every barista fails on is released back each time, its delivery count
// rises, and once the count reaches the group's delivery limit the broker
// archives it; it is never delivered again, and the other tickets flow on. A
// ticket rejected on its first delivery is archived at once.
package poison

import (
	"context"
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

// Config is one run.
type Config struct {
	Tickets   int
	Poison    int // the ticket every barista releases
	Reject    int // the ticket rejected on its first delivery
	Limit     int // the group's share.delivery.count.limit (Kafka's default: 5)
	Consumers int
}

// Defaults: 20 tickets, ticket 7 poison, ticket 13 rejected, Kafka's default
// delivery limit, 5. Since Kafka 4.3 the limit is also a group config
// (KIP-1240), which Run sets; before, only the broker-wide
// group.share.delivery.count.limit could change it.
var Defaults = Config{Tickets: 20, Poison: 7, Reject: 13, Limit: 5, Consumers: 2}

// Delivery is one delivery of a ticket to a barista and what it did.
type Delivery struct {
	At      time.Time `json:"at"`
	Barista string    `json:"barista"`
	Ticket  int       `json:"ticket"`
	Count   int32     `json:"delivery_count"`
	Action  string    `json:"action"` // accept, release, reject
}

// Result is a run's outcome.
type Result struct {
	Config      Config     `json:"config"`
	Topic       string     `json:"topic"`
	Deliveries  []Delivery `json:"deliveries"`  // of the poison and the rejected ticket
	Accepted    int        `json:"accepted"`    // distinct other tickets accepted
	Redelivered int        `json:"redelivered"` // deliveries of other tickets beyond the first
	StartOffset int64      `json:"share_start_offset"`
	End         int64      `json:"end_offset"`
}

// Of returns the deliveries of one ticket.
func (r Result) Of(ticket int) []Delivery {
	var out []Delivery
	for _, d := range r.Deliveries {
		if d.Ticket == ticket {
			out = append(out, d)
		}
	}
	return out
}

// Run writes the tickets to a fresh one-partition topic and runs the
// baristas until the group's start offset passes every ticket: each accepted,
// rejected or archived.
func Run(ctx context.Context, cfg brewkit.Config, c Config, say func(string)) (Result, error) {
	res := Result{Config: c}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	var drop func(context.Context) error
	if res.Topic, drop, err = brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.tickets.poison.", Partitions: 1}); err != nil {
		return res, err
	}
	group := res.Topic
	defer func() {
		drop(ctx) //nolint:errcheck // leftovers are harmless
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		adm.DeleteGroup(dctx, group) //nolint:errcheck // and so is the group
	}()
	if err := groupconfigs.Set(ctx, cl, group, map[string]string{
		"share.auto.offset.reset":    "earliest",
		"share.delivery.count.limit": strconv.Itoa(c.Limit),
	}); err != nil {
		return res, err
	}
	if err := queue.Tickets(ctx, cl, res.Topic, c.Tickets); err != nil {
		return res, err
	}
	res.End = int64(c.Tickets)

	r := &run{c: c, adm: adm, group: group, res: &res, say: say, accepted: map[int]int{}}
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, c.Consumers)
	for i := range c.Consumers {
		name := fmt.Sprintf("barista-%d", i+1)
		wg.Go(func() {
			if err := barista(cctx, cfg, c, group, res.Topic, name, r.deliver); err != nil {
				errs <- fmt.Errorf("%s: %w", name, err)
			}
		})
	}
	werr := r.waitNoLag(ctx, errs)
	stop()
	wg.Wait()
	select {
	case err := <-errs:
		return res, err
	default:
	}
	if werr != nil {
		return res, fmt.Errorf("the group still has tickets to do (start offset %d of %d): %w", res.StartOffset, res.End, werr)
	}
	r.tally()
	return res, nil
}

// run is what one Run's baristas and its wait share.
type run struct {
	c     Config
	adm   *kadm.Client
	group string  // named after the topic
	res   *Result // the deliveries of the poison and the rejected ticket, and the tally
	say   func(string)

	mu        sync.Mutex
	accepted  map[int]int // every other ticket: times accepted
	delivered bool        // the first delivery was said
}

// waitNoLag waits until the group has no lag: every ticket accepted,
// rejected or archived. (Kafka 4.2 moves the start offset it reports past an
// archived record only later; the lag counts it at once.) A barista's error
// in errs ends the wait, and stays in errs.
func (r *run) waitNoLag(ctx context.Context, errs chan error) error {
	return brewkit.WaitFor(ctx, 2*time.Minute, 200*time.Millisecond, func() bool {
		select {
		case err := <-errs:
			errs <- err
			return true
		default:
		}
		var lag int64
		r.res.StartOffset, lag = startOffset(ctx, r.adm, r.group, r.res.Topic)
		return lag == 0 && r.acceptedTickets() == r.c.Tickets-2
	})
}

// startOffset is the share group's start offset and lag on partition 0
// (-1, -1 unknown).
func startOffset(ctx context.Context, adm *kadm.Client, group, topic string) (start, lag int64) {
	offs, err := adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		return -1, -1
	}
	if o, ok := offs[group].Offsets.Lookup(topic, 0); ok && o.Err == nil {
		return o.StartOffset, o.Lag
	}
	return -1, -1
}

// barista is one share consumer of the group: it releases the poison
// ticket, which comes back with its delivery count up by one until the
// group's delivery limit archives it, rejects the known bad one, which is
// archived at once, and accepts every other.
func barista(ctx context.Context, cfg brewkit.Config, c Config, group, topic, name string, deliver func(Delivery)) error {
	return queue.Serve(ctx, cfg, group, topic, 5, func(r *kgo.Record) kgo.AckStatus {
		d := Delivery{At: time.Now(), Barista: name, Ticket: queue.Ticket(r), Count: r.DeliveryCount(), Action: "accept"}
		status := kgo.AckAccept
		switch d.Ticket {
		case c.Poison:
			d.Action, status = "release", kgo.AckRelease // the tablet fails on it
		case c.Reject:
			d.Action, status = "reject", kgo.AckReject // known bad: never again
		}
		deliver(d)
		return status
	})
}

// Print writes the poison's and the rejected ticket's deliveries and the rest.
func (r Result) Print(w io.Writer) {
	t := brewkit.NewTable(w, "TICKET", "DELIVERY", "BARISTA", "ACTION")
	for _, d := range append(r.Of(r.Config.Poison), r.Of(r.Config.Reject)...) {
		t.Row(d.Ticket, d.Count, d.Barista, d.Action)
	}
	t.Flush()
	fmt.Fprintf(w, "ticket %d archived after %d deliveries (the group's share.delivery.count.limit=%d); ticket %d archived on its reject\n",
		r.Config.Poison, len(r.Of(r.Config.Poison)), r.Config.Limit, r.Config.Reject)
	fmt.Fprintf(w, "the other %d tickets: %d accepted, %d redelivered; the group's lag: 0\n",
		r.Config.Tickets-2, r.Accepted, r.Redelivered)
}

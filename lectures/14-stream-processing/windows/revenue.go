// Package revenue is the lecture's first program: the till writes an hour
// of lunch... ten minutes of it, 1,200 orders of 12 shops, some late on
// purpose; one instance of the analytics service counts revenue per shop
// per minute by event time; a batch recount of the same topic checks it.
package windows

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/analytics"
	"github.com/brew-course/kafka/lectures/14-stream-processing/recount"
	"github.com/brew-course/kafka/lectures/14-stream-processing/store"
	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
	"github.com/brew-course/kafka/lectures/14-stream-processing/window"
)

// Result is one run.
type Result struct {
	In      string
	Plan    till.Plan
	Written till.Written
	Late    []Late        // the first orders dropped as too late
	Counts  window.Counts // as the service judged them
	Totals  window.Totals // the service's windows (its changelog)
	Recount recount.Result
}

// Late is an order the service dropped: the window it falls in had closed
// by the time it arrived.
type Late struct {
	Shop      string
	Partition int32
	At        time.Time // its event time
	Stream    time.Time // its partition's stream time when it came
	Closed    time.Time // when its window stopped taking orders: end + grace
}

// Run writes the plan's orders to a topic of the run's own, counts them with
// one instance of the service, and recounts them.
func Run(ctx context.Context, cfg brewkit.Config, p till.Plan, dir string, say func(string)) (res Result, err error) {
	res.Plan = p
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	in, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.stream.windows.", Partitions: 6})
	if err != nil {
		return res, err
	}
	res.In = in
	c := analytics.Defaults
	c.In, c.Changelog, c.Out, c.Group = in, in+"-changelog", in+"-revenue", in+".analytics"
	c.Dir = dir + "/" + in
	c.Idle = 2 * time.Second
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		drop(dctx)                                 //nolint:errcheck // leftovers are harmless
		adm.DeleteTopics(dctx, c.Changelog, c.Out) //nolint:errcheck // and so are these
		analytics.DeleteGroup(dctx, adm, c, c.ID)  //nolint:errcheck // and the group
		os.RemoveAll(c.Dir)                        //nolint:errcheck // and the local store
	}()
	if err := analytics.Topics(ctx, adm, c); err != nil {
		return res, err
	}
	if res.Written, err = till.Write(ctx, cfg, in, 6, p); err != nil {
		return res, err
	}
	say(fmt.Sprintf("the till wrote %d orders to %s; the analytics service counts them", res.Written.Orders, in))
	st, err := analytics.Run(ctx, cfg, c, func(string) {})
	if err != nil {
		return res, err
	}
	res.Counts = st.Counts
	if res.Totals, _, err = store.Materialized(ctx, cfg, adm, c.Changelog); err != nil {
		return res, err
	}
	say("recounting the topic in one batch")
	if res.Recount, err = recount.Run(ctx, cfg, adm, in, c.Window); err != nil {
		return res, err
	}
	stream := map[int32]time.Time{}
	for _, o := range p.Draw(6) {
		v, st := c.Window.Judge(stream[o.Partition], o.At)
		if v == window.TooLate && len(res.Late) < 3 {
			start := c.Window.Start(o.At)
			res.Late = append(res.Late, Late{o.ShopID, o.Partition, o.At, stream[o.Partition], start.Add(c.Window.Size + c.Window.Grace)})
		}
		stream[o.Partition] = st
	}
	return res, nil
}

// Print writes what the service counted.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "%d orders of %d shops, event times %s to %s on %s; windows of %s, grace %s\n",
		r.Written.Orders, r.Plan.Shops, till.Lunch.Format("15:04"), till.Lunch.Add(time.Duration(r.Plan.Minutes)*time.Minute).Format("15:04"),
		till.Lunch.Format("2006-01-02"), window.Brew.Size, window.Brew.Grace)
	t := brewkit.NewTable(w, "ORDERS", "THE TILL MEANT", "THE SERVICE JUDGED")
	t.Row("in order", r.Written.Meant.Records-r.Written.Meant.OutOfOrder-r.Written.Meant.TooLate, r.Counts.Records-r.Counts.OutOfOrder-r.Counts.TooLate)
	t.Row("out of order, counted", r.Written.Meant.OutOfOrder, r.Counts.OutOfOrder)
	t.Row("too late, dropped", r.Written.Meant.TooLate, r.Counts.TooLate)
	t.Flush() //nolint:errcheck // a writer of ours
	fmt.Fprintln(w)
	for _, l := range r.Late {
		fmt.Fprintf(w, "dropped: %s at %s, partition %d already at %s: its window closed at %s\n",
			l.Shop, l.At.Format("15:04:05"), l.Partition, l.Stream.Format("15:04:05"), l.Closed.Format("15:04:05"))
	}
	fmt.Fprintln(w)
	shops := []string{brewkit.ShopID(1), brewkit.ShopID(2), brewkit.ShopID(3)}
	header := []string{"REVENUE, $"}
	for m := range r.Plan.Minutes {
		header = append(header, till.Lunch.Add(time.Duration(m)*time.Minute).Format("15:04"))
	}
	t = brewkit.NewTable(w, header...)
	for _, s := range shops {
		row := []any{s}
		for m := range r.Plan.Minutes {
			rev := r.Totals[window.Key{Shop: s, Start: till.Lunch.Add(time.Duration(m) * time.Minute)}]
			row = append(row, fmt.Sprintf("%.2f", float64(rev.Cents)/100))
		}
		t.Row(row...)
	}
	t.Flush() //nolint:errcheck // a writer of ours
	differ, extra := window.Diff(r.Recount.Totals, r.Totals)
	fmt.Fprintf(w, "\nthe batch recount: %d windows, %d too late; windows that differ: %d (%+d cents)\n", len(r.Recount.Totals), r.Recount.Counts.TooLate, len(differ), extra)
}

package kitchen

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/txnlog"
)

// Report is what the kitchen made of the orders, as a read_committed
// consumer of both topics sees it. Each order record must have exactly one
// KitchenStarted, then one OrderReady, naming it as their source.
type Report struct {
	Orders     int      `json:"orders"`             // order records in the input
	Events     int      `json:"events"`             // kitchen events in the output
	Exact      int      `json:"exact"`              // orders with exactly KitchenStarted, then OrderReady
	Missing    int      `json:"missing"`            // orders with no kitchen event, or only one of the two
	Duplicated int      `json:"duplicated"`         // orders cooked more than once
	OutOfOrder int      `json:"out_of_order"`       // OrderReady before KitchenStarted
	Examples   []string `json:"examples,omitempty"` // a few orders that went wrong
}

// OK says every order was cooked exactly once.
func (r Report) OK() bool { return r.Exact == r.Orders && r.Events == 2*r.Orders }

// NoneCooked says there are orders but no kitchen event at all: no kitchen
// has run on these topics yet (other lectures' demos write orders too), so
// counting every order missing would blame a kitchen that never started.
func (r Report) NoneCooked() bool { return r.Orders > 0 && r.Events == 0 }

// Verify reads in and out with read_committed and checks every order.
func Verify(ctx context.Context, cfg brewkit.Config, in, out string) (Report, error) {
	var rep Report
	_, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return rep, err
	}
	defer adm.Close()
	for _, topic := range []string{in, out} {
		if err := txnlog.Settle(ctx, adm, topic, 10*time.Second); err != nil {
			return rep, err
		}
	}
	orders, err := txnlog.Read(ctx, cfg, adm, in, true)
	if err != nil {
		return rep, err
	}
	events, err := txnlog.Read(ctx, cfg, adm, out, true)
	if err != nil {
		return rep, err
	}
	cooked := map[string][]brewkit.EventType{} // order record: its kitchen events, in log order
	for _, r := range events {
		if r.Attrs.IsControl() {
			continue
		}
		e, err := brewkit.DecodeEvent(r)
		if err != nil {
			return rep, err
		}
		cooked[e.Source] = append(cooked[e.Source], e.Type)
		rep.Events++
	}
	for _, r := range orders {
		if r.Attrs.IsControl() {
			continue
		}
		rep.Orders++
		source := SourceOf(r)
		got := cooked[source]
		started := slices.Index(got, brewkit.KitchenStarted)
		ready := slices.Index(got, brewkit.OrderReady)
		switch {
		case slices.Equal(got, []brewkit.EventType{brewkit.KitchenStarted, brewkit.OrderReady}):
			rep.Exact++
			continue
		case started < 0 || ready < 0:
			rep.Missing++
		case len(got) > 2:
			rep.Duplicated++
		case ready < started:
			rep.OutOfOrder++
		}
		if len(rep.Examples) < 3 {
			rep.Examples = append(rep.Examples, fmt.Sprintf("%s: %v", source, got))
		}
	}
	return rep, nil
}

// Print writes the report.
func (r Report) Print(w io.Writer) {
	t := brewkit.NewTable(w, "ORDERS", "KITCHEN EVENTS", "EXACTLY ONCE", "MISSING", "DUPLICATED", "OUT OF ORDER")
	t.Row(r.Orders, r.Events, r.Exact, r.Missing, r.Duplicated, r.OutOfOrder)
	t.Flush()
	for _, e := range r.Examples {
		fmt.Fprintln(w, "  e.g.", e)
	}
}

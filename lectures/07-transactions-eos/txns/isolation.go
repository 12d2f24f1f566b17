package txns

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/07-transactions-eos/txnlog"
)

// Row is one offset of a partition and who sees it.
type Row struct {
	Offset      int64  `json:"offset"`
	Record      string `json:"record"`
	Uncommitted string `json:"read_uncommitted"`
	Committed   string `json:"read_committed"`
}

// TopicView is one topic's partition 0 while a transaction is open.
type TopicView struct {
	Topic    string `json:"topic"`
	Rows     []Row  `json:"rows"`
	HW       int64  `json:"high_watermark"`
	LSO      int64  `json:"last_stable_offset"`
	HWAfter  int64  `json:"high_watermark_after_commit"`
	LSOAfter int64  `json:"last_stable_offset_after_commit"`
}

// Isolation is the read-committed demo's outcome.
type Isolation struct {
	Outcomes []Outcome   `json:"transactions"`
	Views    []TopicView `json:"topics"`
}

// RunIsolation writes four transactions of an order and its payment to two
// fresh one-partition topics: committed, aborted, committed, and one left
// open; reads both topics with each isolation level; then commits the open one.
func RunIsolation(ctx context.Context, cfg brewkit.Config, adm *kadm.Client) (Isolation, error) {
	var iso Isolation
	orders, dropOrders, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.isolation.orders.", Partitions: 1})
	if err != nil {
		return iso, err
	}
	defer dropOrders(ctx) //nolint:errcheck // leftovers are harmless
	payments, dropPayments, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.isolation.payments.", Partitions: 1})
	if err != nil {
		return iso, err
	}
	defer dropPayments(ctx) //nolint:errcheck // leftovers are harmless

	c := WriteConfig{ID: fmt.Sprintf("brew.isolation.%d", rand.Uint32()%1e6), Orders: orders, Payments: payments, Transactions: 3, AbortEvery: 2, FirstOrder: 1}
	if err := Write(ctx, cfg, c, func(o Outcome) { iso.Outcomes = append(iso.Outcomes, o) }); err != nil {
		return iso, err
	}

	for _, topic := range []string{orders, payments} {
		if err := txnlog.Settle(ctx, adm, topic, 10*time.Second); err != nil { // the markers of txn 3 are in
			return iso, err
		}
	}

	// The fourth transaction stays open while both levels read.
	open, err := brewkit.NewClient(cfg, brewkit.TransactionalID(c.ID+".open"), kgo.TransactionTimeout(time.Minute))
	if err != nil {
		return iso, err
	}
	defer open.Close()
	if err := open.BeginTransaction(); err != nil {
		return iso, err
	}
	order := brewkit.NewOrder(rand.New(rand.NewPCG(4, 4)), 4, time.Now())
	paid := order
	paid.Type, paid.Items = brewkit.PaymentReceived, nil
	if err := produce(ctx, cfg, open, order.Record(orders), paid.Record(payments)); err != nil {
		abort(ctx, cfg, open, err)
		return iso, fmt.Errorf("writing the open transaction: %w", err)
	}
	for _, topic := range []string{orders, payments} {
		v, err := view(ctx, cfg, adm, topic)
		if err != nil {
			return iso, err
		}
		iso.Views = append(iso.Views, v)
	}
	if err := end(ctx, cfg, open, kgo.TryCommit); err != nil {
		return iso, fmt.Errorf("committing the open transaction: %w", err)
	}
	iso.Outcomes = append(iso.Outcomes, Outcome{N: 4, OrderID: order.OrderID, Committed: true})
	for i := range iso.Views {
		v := &iso.Views[i]
		err := brewkit.WaitFor(ctx, 10*time.Second, 50*time.Millisecond, func() bool {
			v.HWAfter, v.LSOAfter, err = marks(ctx, adm, v.Topic)
			return err == nil && v.LSOAfter == v.HWAfter
		})
		if err != nil {
			return iso, fmt.Errorf("%s: the last stable offset did not reach the high watermark: %w", v.Topic, err)
		}
	}
	return iso, nil
}

// marks are partition 0's high watermark and last stable offset.
func marks(ctx context.Context, adm *kadm.Client, topic string) (hw, lso int64, err error) {
	m, err := txnlog.Marks(ctx, adm, topic)
	return m[0].HW, m[0].LSO, err
}

func view(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, topic string) (TopicView, error) {
	v := TopicView{Topic: topic}
	var err error
	if v.HW, v.LSO, err = marks(ctx, adm, topic); err != nil {
		return v, err
	}
	all, err := txnlog.Read(ctx, cfg, adm, topic, false)
	if err != nil {
		return v, err
	}
	committed, err := txnlog.Read(ctx, cfg, adm, topic, true)
	if err != nil {
		return v, err
	}
	seen := map[int64]bool{}
	for _, r := range committed {
		seen[r.Offset] = true
	}
	for _, r := range all {
		row := Row{Offset: r.Offset, Record: Describe(r), Uncommitted: "yes", Committed: "-"}
		if r.Attrs.IsControl() {
			row.Uncommitted = "marker"
		}
		switch {
		case r.Offset >= v.LSO:
			row.Committed = "not yet"
		case seen[r.Offset] && r.Attrs.IsControl():
			row.Committed = "marker"
		case seen[r.Offset]:
			row.Committed = "yes"
		}
		v.Rows = append(v.Rows, row)
	}
	return v, nil
}

// Describe names a record: an event with its order, or a transaction marker.
func Describe(r *kgo.Record) string {
	if r.Attrs.IsControl() {
		// A control record's key: version (int16), then type: 0 abort, 1 commit.
		if len(r.Key) >= 4 && binary.BigEndian.Uint16(r.Key[2:4]) == 1 {
			return "COMMIT marker"
		}
		return "ABORT marker"
	}
	e, err := brewkit.DecodeEvent(r)
	if err != nil {
		return fmt.Sprintf("%q", r.Value)
	}
	return fmt.Sprintf("%s %s", e.Type, e.OrderID)
}

// Print writes the outcomes and each topic's view.
func (iso Isolation) Print(w io.Writer) {
	for _, o := range iso.Outcomes[:len(iso.Outcomes)-1] {
		fmt.Fprintf(w, "txn %d  %s  %s\n", o.N, map[bool]string{true: "committed", false: "aborted  "}[o.Committed], o.OrderID)
	}
	fmt.Fprintf(w, "txn 4  open       %s\n", iso.Outcomes[len(iso.Outcomes)-1].OrderID)
	for _, v := range iso.Views {
		fmt.Fprintf(w, "\n%s, partition 0, while txn 4 is open:\n", v.Topic)
		t := brewkit.NewTable(w, "OFFSET", "RECORD", "READ_UNCOMMITTED", "READ_COMMITTED")
		for _, r := range v.Rows {
			t.Row(r.Offset, r.Record, r.Uncommitted, r.Committed)
		}
		t.Flush()
		fmt.Fprintf(w, "high watermark %d, last stable offset %d; after txn 4 commits: %d and %d\n", v.HW, v.LSO, v.HWAfter, v.LSOAfter)
	}
}

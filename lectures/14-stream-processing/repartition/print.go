package repartition

import (
	"fmt"
	"io"
	"strings"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Shown is how many joined orders Print shows.
const Shown = 5

// Print writes the run's topics, the join's counts, its first joined
// orders by order id, and whether the batch recount agrees. Only the topic
// names differ between two runs of one seed.
func (r Result) Print(w io.Writer) {
	fmt.Fprintln(w)
	t := brewkit.NewTable(w, "TOPIC", "PARTITIONS", "KEY", "RECORDS")
	t.Row(r.Topics.Orders, r.OrdersPartitions, "shop", r.Orders)
	t.Row(r.Topics.Payments, r.PaymentsPartitions, "payment id", r.Payments)
	t.Row(r.Topics.Repartition, r.RepartitionPartitions, "shop", r.Rekeyed)
	t.Row(r.Topics.Joined, r.JoinedPartitions, "shop", len(r.Joined))
	t.Flush() //nolint:errcheck // stdout

	fmt.Fprintf(w, "\nthe payments are not co-partitioned with the orders (keyed by payment id, %d partitions, not %d):\n", r.PaymentsPartitions, r.OrdersPartitions)
	fmt.Fprintf(w, "re-keyed %d payments by shop, shop n to partition (n-1) mod %d as the till places orders\n", r.Rekeyed, r.RepartitionPartitions)

	fmt.Fprintf(w, "\njoined in %d tasks (partition p of orders with partition p of the repartition topic),\n", r.Join.Tasks)
	fmt.Fprintf(w, "a payment with its order when it came at most %d min after it, in event time:\n\n", int(Window.Minutes()))
	t = brewkit.NewTable(w, "VERDICT", "COUNT", "WHAT")
	t.Row(Matched, r.Join.Matched, "payments joined with their order")
	t.Row(TooLate, r.Join.TooLate, fmt.Sprintf("payments more than %d min after their order: not joined", int(Window.Minutes())))
	t.Row(UnknownOrder, r.Join.UnknownOrder, "payments naming an order that was never placed")
	t.Row(Unpaid, r.Join.Unpaid, "orders no payment named")
	t.Flush() //nolint:errcheck // stdout
	fmt.Fprintf(w, "\n%d payments were read before their order and waited for it (up to %d min of stream time)\n", r.Join.Waited, int(Wait.Minutes()))
	fmt.Fprintf(w, "%d orders left the window store as stream time passed their retention (%d min)\n", r.Join.Evicted, int(Retention.Minutes()))

	if len(r.Joined) > 0 {
		fmt.Fprintf(w, "\nthe first joined orders, by order id:\n\n")
		t = brewkit.NewTable(w, "ORDER", "SHOP", "ITEMS", "CENTS", "PAYMENT", "PAID AFTER")
		for _, j := range r.Joined[:min(Shown, len(r.Joined))] {
			t.Row(j.OrderID, j.ShopID, strings.Join(j.Items, ", "), j.Cents, j.PaymentID, fmt.Sprintf("%.1f s", j.PaidAfter))
		}
		t.Flush() //nolint:errcheck // stdout
	}

	if r.Equal() {
		fmt.Fprintf(w, "\nequal to the batch recount: yes\n")
		return
	}
	fmt.Fprintf(w, "\nequal to the batch recount: NO\n")
	for i, d := range r.Differ {
		if i == 10 {
			fmt.Fprintf(w, "  ... and %d more\n", len(r.Differ)-i)
			break
		}
		fmt.Fprintf(w, "  %s\n", d)
	}
}

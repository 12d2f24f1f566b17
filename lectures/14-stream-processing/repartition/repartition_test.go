package repartition

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
)

// The whole program on a cluster: the streaming join, its output read
// back, the batch recount and what the payments were drawn to be agree
// exactly, and every kind of verdict occurs.
func TestJoinEqualsRecountAndWhatWasMeant(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := Defaults
	o.Prefix = "brew.test.stream-join-"
	o.Progress = func(s string) { t.Log(s) }
	r, err := Run(ctx, env.Config, o)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	r.Print(&out)
	t.Log("\n" + out.String())
	if !r.Equal() {
		t.Fatalf("not equal to the recount:\n%s", strings.Join(r.Differ, "\n"))
	}
	if r.Join.Counts != r.Recount || r.Join.Counts != r.Meant {
		t.Fatalf("join %s, recount %s, meant %s", r.Join.Counts, r.Recount, r.Meant)
	}
	c := r.Join.Counts
	if c.Matched == 0 || c.TooLate == 0 || c.UnknownOrder == 0 || c.Unpaid == 0 {
		t.Fatalf("the defaults draw every verdict: %s", c)
	}
	if r.Rekeyed != r.Payments || len(r.Joined) != c.Matched || c.Matched+c.TooLate+c.UnknownOrder != r.Payments || c.Matched+c.TooLate+c.Unpaid != r.Orders {
		t.Fatalf("%d orders, %d payments, %d re-keyed, %d joined: %s", r.Orders, r.Payments, r.Rekeyed, len(r.Joined), c)
	}
	if r.Join.Waited == 0 || r.Join.Evicted == 0 {
		t.Fatalf("the tasks: %d payments waited for their order, %d orders evicted; want some of both", r.Join.Waited, r.Join.Evicted)
	}
	if !strings.Contains(out.String(), "equal to the batch recount: yes\n") {
		t.Fatal("Print does not say the join equals the recount")
	}
}

// The wrong way: joining the payments as they are, keyed by payment id,
// partition p with partition p of the orders. With 4 partitions against 6
// the join refuses unless told; told, it misses most joins. With 6 against
// 6 the partition counts pass the check, and it still misses them: the key
// differs.
func TestJoiningWithoutRepartitioningMissesJoins(t *testing.T) {
	env := brewtest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	orders := env.FreshTopic(t, "stream-join-orders", OrdersPartitions)
	if _, err := till.Write(ctx, env.Config, orders, OrdersPartitions, till.Defaults); err != nil {
		t.Fatal(err)
	}
	drawn := Payments.Draw(till.Defaults.Draw(OrdersPartitions))
	for _, partitions := range []int32{PaymentsPartitions, OrdersPartitions} {
		payments := env.FreshTopic(t, "stream-join-payments", partitions)
		if err := WritePayments(ctx, env.Config, payments, drawn); err != nil {
			t.Fatal(err)
		}
		spec := JoinSpec{Orders: orders, Payments: payments, Output: env.FreshTopic(t, "stream-join-out", OrdersPartitions)}
		if partitions != OrdersPartitions {
			if _, err := Join(ctx, env.Config, spec); err == nil || !strings.Contains(err.Error(), "not co-partitioned") {
				t.Fatalf("joining %d partitions with %d: %v; want a refusal", OrdersPartitions, partitions, err)
			}
			spec.Unchecked = true
		}
		s, err := Join(ctx, env.Config, spec)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Recount(ctx, env.Config, orders, payments)
		if err != nil {
			t.Fatal(err)
		}
		if b.Counts != drawn.Meant {
			t.Fatalf("the recount %s, the payments were drawn as %s", b.Counts, drawn.Meant)
		}
		missed := b.Matched - s.Matched
		t.Logf("payments keyed by payment id on %d partitions: %s; the recount %s; %d joins missed", partitions, s.Counts, b.Counts, missed)
		if s.Matched > b.Matched/3 || s.UnknownOrder < missed/2 || s.Unpaid < missed/2 {
			t.Fatalf("joined without repartitioning (%d partitions): %s; want most of the recount's %d joins missed", partitions, s.Counts, b.Matched)
		}
		out, err := ReadJoined(ctx, env.Config, spec.Output)
		if err != nil || len(out) != s.Matched {
			t.Fatalf("the output holds %d joins (%v), the join counted %d", len(out), err, s.Matched)
		}
		if d := Compare(s.Counts, out, b); len(d) == 0 {
			t.Fatal("Compare finds no difference")
		}
	}
}

// The defaults draw what the lecture's README shows.
func TestDefaultsDraw(t *testing.T) {
	d := Payments.Draw(till.Defaults.Draw(OrdersPartitions))
	want := Counts{Matched: 1140, TooLate: 36, UnknownOrder: 20, Unpaid: 24}
	if d.Meant != want {
		t.Fatalf("the defaults draw %s; want %s", d.Meant, want)
	}
	for i, p := range d.Payments {
		if p.ID != fmt.Sprintf("pay-%07d", i+1) || i > 0 && p.At.Before(d.Payments[i-1].At) {
			t.Fatalf("payment %d: %s at %s: want numbered in event-time order", i, p.ID, p.At)
		}
	}
}

// The task, record by record, without Kafka: the stream the join sees in
// memory, with a payment read before its order, one too late, one for an
// order never placed and an order never paid.
func TestTask(t *testing.T) {
	at := func(min, sec int) time.Time {
		return till.Lunch.Add(time.Duration(min)*time.Minute + time.Duration(sec)*time.Second)
	}
	order := func(id string, a time.Time) event {
		return event{Event: brewkit.Event{Type: brewkit.OrderPlaced, OrderID: id, ShopID: "shop-01", At: a, Cents: 300}}
	}
	pay := func(id, order string, a time.Time) event {
		return event{Event: brewkit.Event{Type: brewkit.PaymentReceived, OrderID: order, ShopID: "shop-01", At: a, Cents: 300}, payment: id}
	}
	orders := []event{order("o1", at(0, 0)), order("o3", at(2, 30)), order("o2", at(0, 40)), order("o4", at(3, 0)), order("o5", at(30, 0))}
	payments := []event{
		pay("p1", "o1", at(1, 0)),  // o1 is read first: joined at once
		pay("p2", "o2", at(1, 10)), // read before o2 (o2 comes behind o3): waits, then joins
		pay("p3", "o3", at(9, 0)),  // 6.5 min after o3: too late
		pay("p9", "o9", at(10, 0)), // o9 was never placed: unknown once stream time passes 15:00
		pay("p5", "o5", at(31, 0)), // o4 expires unpaid before this
	}
	var out []Joined
	tk := newTask(func(j Joined) { out = append(out, j) },
		&feed{queue: orders, next: 5, end: 5}, &feed{queue: payments, next: 5, end: 5})
	for {
		e, ok := earliest(tk.feeds)
		if !ok {
			break
		}
		tk.process(e)
		if e.payment == "p3" && tk.counts != (Counts{Matched: 2, TooLate: 1}) {
			t.Fatalf("after p3: %s", tk.counts)
		}
	}
	if want := (Counts{Matched: 3, TooLate: 1, UnknownOrder: 1, Unpaid: 1}); tk.counts != want || tk.waited != 1 || tk.evicted != 4 {
		t.Fatalf("%s, %d waited, %d evicted; want %s, 1 waited, 4 evicted", tk.counts, tk.waited, tk.evicted, want)
	}
	tk.finish()
	if len(out) != 3 || out[1].OrderID != "o2" || out[1].PaymentID != "p2" || out[1].PaidAfter != 30 {
		t.Fatalf("joined %+v", out)
	}
}

func TestShopPartition(t *testing.T) {
	for shop, want := range map[string]int32{"shop-01": 0, "shop-06": 5, "shop-07": 0, "shop-12": 5} {
		if got, err := ShopPartition(shop, 6); err != nil || got != want {
			t.Errorf("ShopPartition(%s, 6) = %d, %v; want %d", shop, got, err, want)
		}
	}
	for _, bad := range []string{"", "shop-", "shop-00", "cafe-01"} {
		if _, err := ShopPartition(bad, 6); err == nil {
			t.Errorf("ShopPartition(%q) took it", bad)
		}
	}
}

package repartition

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/14-stream-processing/till"
)

// Plan says which payments to draw for the till's orders.
type Plan struct {
	Late    float64 // the share of orders paid 6-10 min after they were placed: outside the window
	Unpaid  float64 // the share of orders never paid
	Unknown float64 // stray payments naming an order that does not exist, as a share of the orders
	Seed    uint64
}

// Payments are the payments' defaults: 3% late, 2% unpaid, 1% stray.
var Payments = Plan{Late: 0.03, Unpaid: 0.02, Unknown: 0.01, Seed: 14}

// Payment is one payment as the payment service writes it.
type Payment struct {
	brewkit.Event
	ID    string  // pay-0000123, its key
	Meant Verdict // Matched, TooLate or UnknownOrder, as drawn
}

// Drawn is what Draw drew: the payments in the order they are written
// (by event time), and what the join must find.
type Drawn struct {
	Payments []Payment
	Meant    Counts // Unpaid counts the orders drawn unpaid
}

// Draw draws a payment for each of orders but the unpaid ones, made 5-180 s
// after the order (6-10 min for a late one), and the stray payments. The
// payments are numbered in event-time order, the order they are written.
func (p Plan) Draw(orders []till.Order) Drawn {
	rng := rand.New(rand.NewPCG(p.Seed, 1414))
	var d Drawn
	stray := 0
	for _, o := range orders {
		after := 5*time.Second + time.Duration(rng.IntN(175_000))*time.Millisecond
		r := rng.Float64()
		switch {
		case r < p.Unpaid:
			d.Meant.Count(Unpaid)
		case r < p.Unpaid+p.Late:
			late := 6*time.Minute + time.Duration(rng.IntN(240_000))*time.Millisecond
			d.Payments = append(d.Payments, payment(o.Event, o.At.Add(late), TooLate))
		default:
			d.Payments = append(d.Payments, payment(o.Event, o.At.Add(after), Matched))
		}
		if rng.Float64() < p.Unknown {
			stray++
			ghost := o.Event
			ghost.OrderID = brewkit.OrderID(9_000_000 + int64(stray)) // the till never placed it
			ghost.ShopID = brewkit.ShopID(1 + rng.IntN(till.Defaults.Shops))
			d.Payments = append(d.Payments, payment(ghost, o.At.Add(after), UnknownOrder))
		}
	}
	slices.SortStableFunc(d.Payments, func(a, b Payment) int { return a.At.Compare(b.At) })
	for i := range d.Payments {
		d.Payments[i].ID = fmt.Sprintf("pay-%07d", i+1)
		d.Meant.Count(d.Payments[i].Meant)
	}
	return d
}

func payment(o brewkit.Event, at time.Time, meant Verdict) Payment {
	return Payment{Event: brewkit.Event{
		Type: brewkit.PaymentReceived, V: brewkit.EventVersion, OrderID: o.OrderID, ShopID: o.ShopID,
		At: at.UTC(), Cents: o.Cents,
	}, Meant: meant}
}

// Record is the payment as written: keyed by its payment id, its partition
// left to the producer's default partitioner (murmur2 of the key).
func (p Payment) Record(topic string) *kgo.Record {
	r := p.Event.Record(topic)
	r.Key = []byte(p.ID)
	return r
}

// WritePayments writes d's payments to topic with the default partitioner.
func WritePayments(ctx context.Context, cfg brewkit.Config, topic string, d Drawn) error {
	cl, err := brewkit.NewClient(cfg) // kgo's default partitioner: murmur2 of the key, as Java's
	if err != nil {
		return err
	}
	defer cl.Close()
	recs := make([]*kgo.Record, len(d.Payments))
	for i, p := range d.Payments {
		recs[i] = p.Record(topic)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("writing payments to %s: %w", topic, err)
	}
	return nil
}

// paymentHeader carries a payment's id once the payment is re-keyed by
// shop: Kafka Streams' selectKey, too, keeps the value and drops the old
// key, so whatever the old key said must travel beside the record.
const paymentHeader = "payment-id"

// decodePayment reads a payment from the payments topic (its key is its
// id) or from the repartition topic (the id is in a header).
func decodePayment(r *kgo.Record) (event, error) {
	e, err := brewkit.DecodeEvent(r)
	if err != nil {
		return event{}, err
	}
	if e.Type != brewkit.PaymentReceived || e.OrderID == "" || e.ShopID == "" || e.At.IsZero() {
		return event{}, fmt.Errorf("%s/%d@%d: not a payment of an order (%s)", r.Topic, r.Partition, r.Offset, e.Type)
	}
	id := string(r.Key)
	for _, h := range r.Headers {
		if h.Key == paymentHeader {
			id = string(h.Value)
		}
	}
	return event{Event: e, payment: id}, nil
}

// decodeOrder reads an order from the orders topic.
func decodeOrder(r *kgo.Record) (event, error) {
	e, err := till.Decode(r)
	if err != nil {
		return event{}, err
	}
	if e.Type != brewkit.OrderPlaced || e.OrderID == "" {
		return event{}, fmt.Errorf("%s/%d@%d: not an order (%s)", r.Topic, r.Partition, r.Offset, e.Type)
	}
	return event{Event: e}, nil
}

// decodeJoined reads a record of the join's output.
func decodeJoined(r *kgo.Record) (Joined, error) {
	var j Joined
	if err := json.Unmarshal(r.Value, &j); err != nil || j.OrderID == "" {
		return j, fmt.Errorf("%s/%d@%d: not a joined order: %v", r.Topic, r.Partition, r.Offset, err)
	}
	return j, nil
}

// byOrder sorts joins by order id.
func byOrder(a, b Joined) int { return cmp.Compare(a.OrderID, b.OrderID) }

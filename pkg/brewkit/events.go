package brewkit

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// EventType names a Brew event.
type EventType string

// The life of an order, one event per step.
const (
	OrderPlaced     EventType = "OrderPlaced"
	PaymentReceived EventType = "PaymentReceived"
	KitchenStarted  EventType = "KitchenStarted"
	OrderReady      EventType = "OrderReady"
	OrderDelivered  EventType = "OrderDelivered"
)

// EventVersion is the version of the JSON encoding below.
const EventVersion = 1

// Event is a Brew event. Every event is keyed by its order id, so all events of
// one order land in one partition, in order.
type Event struct {
	Type    EventType `json:"type"`
	V       int       `json:"v"`
	OrderID string    `json:"order_id"`
	ShopID  string    `json:"shop_id"`
	At      time.Time `json:"at"`
	Items   []string  `json:"items,omitempty"`       // OrderPlaced
	Cents   int64     `json:"total_cents,omitempty"` // OrderPlaced, PaymentReceived
	Courier string    `json:"courier_id,omitempty"`  // OrderDelivered
	Seq     int64     `json:"seq,omitempty"`         // a producer's running number, for drills that count
	Run     string    `json:"run,omitempty"`         // which drill run wrote it
	Source  string    `json:"source,omitempty"`      // the record this event answers: topic/partition@offset
}

// Shops is how many coffee shops Brew has.
const Shops = 80

var menu = []string{"espresso", "cappuccino", "latte", "flat white", "raf", "americano", "cocoa", "matcha latte"}

// ShopID names shop n (1..80).
func ShopID(n int) string { return fmt.Sprintf("shop-%02d", n) }

// OrderID names order n.
func OrderID(n int64) string { return fmt.Sprintf("ord-%07d", n) }

// NewOrder makes an OrderPlaced event for order n in a random shop.
func NewOrder(rng *rand.Rand, n int64, at time.Time) Event {
	items := make([]string, 1+rng.IntN(3))
	var cents int64
	for i := range items {
		items[i] = menu[rng.IntN(len(menu))]
		cents += 200 + int64(rng.IntN(300))
	}
	return Event{
		Type: OrderPlaced, V: EventVersion, OrderID: OrderID(n), ShopID: ShopID(1 + rng.IntN(Shops)),
		At: at.UTC(), Items: items, Cents: cents,
	}
}

// Record encodes e for topic, keyed by its order id, with its type in a header.
func (e Event) Record(topic string) *kgo.Record {
	v, err := json.Marshal(e)
	if err != nil {
		panic(err) // an Event always marshals
	}
	return &kgo.Record{
		Topic:   topic,
		Key:     []byte(e.OrderID),
		Value:   v,
		Headers: []kgo.RecordHeader{{Key: "type", Value: []byte(e.Type)}},
	}
}

// DecodeEvent reads an event written by Record.
func DecodeEvent(r *kgo.Record) (Event, error) {
	var e Event
	if err := json.Unmarshal(r.Value, &e); err != nil {
		return e, fmt.Errorf("decoding %s/%d@%d: %w", r.Topic, r.Partition, r.Offset, err)
	}
	if e.V != EventVersion {
		return e, fmt.Errorf("decoding %s/%d@%d: event version %d, this code reads %d", r.Topic, r.Partition, r.Offset, e.V, EventVersion)
	}
	return e, nil
}

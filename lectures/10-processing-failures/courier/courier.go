// Package courier is the heart of courier-service: it turns an order record
// of brew.orders.v1 into a delivery booking at the partner, and says what
// kind of failure a failed booking is. The lecture's consumers (naive,
// retry, backpressure, workers) differ in what they do with a failure, not
// in this.
package courier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// The topics of courier-service, all under brew.courier. so that `make
// reset-lecture L=10` finds them. The orders themselves are brew.orders.v1.
const (
	Orders  = "brew.orders.v1" // brewkit.Orders
	Retry5s = "brew.courier.retry.5s"
	Retry1m = "brew.courier.retry.1m"
	DLT     = "brew.courier.dlt"
)

// PoisonError is a record no retry will ever book: it does not decode as an
// order. It goes to the dead-letter topic at once.
type PoisonError struct {
	Topic     string
	Partition int32
	Offset    int64
	Err       error
}

func (e *PoisonError) Error() string {
	return fmt.Sprintf("poison record %s/%d@%d: %v", e.Topic, e.Partition, e.Offset, e.Err)
}

func (e *PoisonError) Unwrap() error { return e.Err }

// Decode reads an order from its record. A record that is not an OrderPlaced
// event with an order id is a *PoisonError.
func Decode(r *kgo.Record) (brewkit.Event, error) {
	var ev brewkit.Event
	poison := func(err error) error {
		return &PoisonError{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Err: err}
	}
	if err := json.Unmarshal(r.Value, &ev); err != nil {
		return ev, poison(fmt.Errorf("not an order: %w", err))
	}
	if ev.Type != brewkit.OrderPlaced || ev.OrderID == "" {
		return ev, poison(fmt.Errorf("not an order: type %q, order id %q", ev.Type, ev.OrderID))
	}
	return ev, nil
}

// Kind is what a failed booking calls for.
type Kind int

const (
	Done      Kind = iota // booked (no failure)
	Retriable             // the partner may take it later: retry
	Poison                // never bookable: dead-letter it
	Stopped               // the service is stopping: leave it uncommitted
)

func (k Kind) String() string {
	return [...]string{"done", "retriable", "poison", "stopped"}[k]
}

// Classify says what err calls for. A failure that is neither the partner's
// retriable answer nor a poison record (a 400: the partner will never take
// this booking) is poison too: retrying it only delays the dead letter.
func Classify(ctx context.Context, err error) Kind {
	var pe *PoisonError
	switch {
	case err == nil:
		return Done
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return Stopped
	case errors.As(err, &pe):
		return Poison
	case partner.Retriable(err):
		return Retriable
	default:
		return Poison
	}
}

// Booker books deliveries at the partner.
type Booker struct {
	Partner *partner.Client
	// Idempotent sends the order id as the call's idempotency key, so that a
	// booking retried after a timeout is not a second booking.
	Idempotent bool
}

// Book decodes r and books its delivery. The error is a *PoisonError, a
// *partner.Error, or the context's.
func (b Booker) Book(ctx context.Context, r *kgo.Record) error {
	ev, err := Decode(r)
	if err != nil {
		return err
	}
	key := ""
	if b.Idempotent {
		key = ev.OrderID
	}
	_, err = b.Partner.Book(ctx, partner.Request{OrderID: ev.OrderID, ShopID: ev.ShopID}, key)
	return err
}

// PoisonRecord is a malformed order for topic, as a broken producer writes
// it: the key of order id, a value that is not JSON.
func PoisonRecord(topic, orderID string) *kgo.Record {
	return &kgo.Record{Topic: topic, Key: []byte(orderID), Value: []byte(`{"type":"OrderPlaced","order_id":"` + orderID)}
}

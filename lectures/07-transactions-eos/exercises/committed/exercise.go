// Package committed is exercise 07/committed: a reader that sees only committed payments.
//
// Graded on: real Kafka.
//
// Brew's analytics-service sums up the day's takings from brew.payments.v1,
// which order-service writes in transactions: an order and its payment
// commit together, and a failed checkout aborts both. An aborted payment is
// money Brew never received. Write Paid: read the topic from its start and
// return the order ids of the payments committed so far, in log order,
// nothing of an aborted transaction, and without waiting for a transaction
// that is still open. The grader commits, aborts and leaves open transactions
// of payments, calls Paid while one is open and again once it has committed.
package committed

import (
	"context"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Paid returns the order ids (brewkit.Event's OrderID) of the payments
// committed to topic, a topic of one partition on cfg's cluster, in the order
// they are in the log.
func Paid(ctx context.Context, cfg brewkit.Config, topic string) ([]string, error) {
	// TODO: read what is committed, up to where committed reading ends.
	return nil, nil
}

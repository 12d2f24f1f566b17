// Package chooseacks is exercise 05/chooseacks: choose acks for a payment and for a click.
//
// Graded on: any stand.
//
// Brew's app writes two kinds of events. A PaymentReceived is money: it must
// never be acknowledged to payment-service before every in-sync replica has
// it, since an acknowledged payment that a crash takes away is a customer
// charged for nothing. A click on the menu is analytics: losing a few in a
// crash is fine, but the app must not wait on a slow broker, so a click must
// be acknowledged within a second even while a follower of its partition
// hangs. Write PaymentAcks and ClickAcks: the acks setting of each
// producer. The grader builds both producers with your settings (idempotent
// where acks allow it), freezes a follower that is in the partition's ISR,
// then sends a payment and 20 clicks and times their acknowledgements.
package chooseacks

import "github.com/twmb/franz-go/pkg/kgo"

// PaymentAcks is the acks setting of payment-service's producer.
func PaymentAcks() kgo.Acks {
	// TODO: how many copies must a payment have before it is acknowledged?
	return kgo.Acks{}
}

// ClickAcks is the acks setting of the app's click producer.
func ClickAcks() kgo.Acks {
	// TODO: how many copies must a click have before it is acknowledged?
	return kgo.Acks{}
}

// Package poison is exercise 08/poison: accept, release or reject each ticket.
//
// Graded on: real Kafka.
//
// Brew's baristas take drink tickets from a share group. Write Barista: poll
// the share consumer cl until ctx ends, make each ticket with brew and
// acknowledge it by what brew said. nil: the drink is made. ErrJammed: the
// espresso machine jammed, and another try (by any barista) will make it.
// ErrUnknownDrink: the ticket names a drink no shop makes, and no try ever
// will. Every ticket that can be made must be made, and a poison ticket must
// not circulate: the grader runs two of your baristas on 30 tickets, some of
// which jam once and two of which are poison, and checks with the group's lag
// and its dead-letter topic (KIP-1191) that every other ticket was made once
// and each poison ticket was delivered once and ended on the dead-letter topic.
package poison

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Barista serves tickets from cl, a share-group consumer of the tickets
// topic, making each with brew, until ctx ends; then it returns nil.
func Barista(ctx context.Context, cl *kgo.Client, brew func(*kgo.Record) error) error {
	// TODO: poll cl, call brew for every record and acknowledge each
	// (r.Ack) with the status brew's answer calls for.
	return nil
}

// Package trickle is exercise 09/trickle: fewer produce requests for a steady stream of orders.
//
// Graded on: any stand.
//
// Brew's order service does not flood the cluster: all day it sends a steady
// 2,000 orders a second, keyed by order id, over the three partitions of
// brew.orders.v1. The platform team finds the brokers busy answering produce
// requests and asks for at least 3 times fewer of them than franz-go's
// defaults send for the same stream, while half of the orders still reach
// the brokers (acknowledged, acks=all) within 250 ms of the Produce call.
// Write ProducerOpts: the producer options of the order service (acks=all and
// idempotence stay on). The grader sends the same 3 s stream with the
// defaults and with your options, counts the produce requests of each and
// measures the latency of every order.
package trickle

import "github.com/twmb/franz-go/pkg/kgo"

// ProducerOpts returns the order service's producer options, added to the
// course's client options.
func ProducerOpts() []kgo.Opt {
	// TODO: choose the producer settings that send fewer, fuller requests.
	return nil
}

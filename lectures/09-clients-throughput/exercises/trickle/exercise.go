// Package trickle is exercise 09/trickle: fewer produce requests for a steady stream of orders.
//
// Graded on: any stand.
//
// Brew's order service does not flood the cluster: all day it sends a steady
// 2,000 orders a second, keyed by order id, over the three partitions of
// brew.orders.v1. The platform team finds the brokers busy answering produce
// requests and asks for at least 3 times fewer of them than franz-go's
// defaults send for the same stream, while the orders reach the kitchens at
// most 200 ms later than today (the median time from Produce to the
// acknowledgement). Write ProducerOpts: the producer options of the order
// service; acks=all and idempotence stay on. The grader checks those two,
// then sends the same 2 s stream three times with the defaults and three
// times with your options, in turn, counts the produce requests of each and
// measures every order's latency (with many requests allowed in flight, so
// that a broker slow to answer does not fill the batches for you).
package trickle

import "github.com/twmb/franz-go/pkg/kgo"

// ProducerOpts returns the order service's producer options, added to the
// course's client options.
func ProducerOpts() []kgo.Opt {
	// TODO: choose the producer settings that send fewer, fuller requests.
	return nil
}

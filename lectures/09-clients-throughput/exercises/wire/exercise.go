// Package wire is exercise 09/wire: fewer bytes on the wire for the same orders.
//
// Graded on: any stand.
//
// Brew's mountain shops send their orders to the cluster over a metered
// mobile link: every byte the producer writes is paid for, and then stored
// on three replicas. Write ProducerOpts: producer options that
// write the same burst of 20,000 orders (JSON, keyed by order id, to three
// partitions) in at least a quarter fewer bytes than franz-go's defaults
// write for it (at most 75%), acks=all and idempotence kept. The grader produces the burst with the
// defaults and with your options, counts the bytes of the produce requests
// each sends, and reads every order back.
package wire

import "github.com/twmb/franz-go/pkg/kgo"

// ProducerOpts returns the mountain shops' producer options, added to the
// course's client options.
func ProducerOpts() []kgo.Opt {
	// TODO: choose the producer settings that write fewer bytes.
	return nil
}

// A plausible wrong solution of exercise 09/trickle: no linger and small
// batches, as if sending at once were cheaper. At a steady rate it sends a
// request as soon as one is free, with the few orders that came meanwhile:
// more requests than the defaults, not fewer. The grader must fail it.
package trickle

import "github.com/twmb/franz-go/pkg/kgo"

func ProducerOpts() []kgo.Opt {
	return []kgo.Opt{kgo.ProducerLinger(0), kgo.ProducerBatchMaxBytes(16 << 10)}
}

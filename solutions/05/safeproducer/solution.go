// The reference solution of exercise 05/safeproducer.
package safeproducer

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ProducerOptions returns the options order-service's producer is built
// with: acks=all, so an order is acknowledged only once every in-sync
// replica has it, and the idempotent producer (franz-go's default, which
// needs acks=all), so a retry of a write the new leader already has is not
// stored twice. Retries and the delivery timeout stay at franz-go's
// defaults (unlimited), which ride out a leader change; the linger is
// harmless.
func ProducerOptions() []kgo.Opt {
	return []kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(10 * time.Millisecond),
	}
}

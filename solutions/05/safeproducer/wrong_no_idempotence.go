// A plausible wrong solution of exercise 05/safeproducer: acks=all, so no
// acknowledged order is lost, but idempotence still off ("acks=all is
// enough"). The follower that takes over already has some orders the dead
// leader never acknowledged; the producer sends them again, and the new
// leader stores them twice. The grader must fail it.
package safeproducer

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func ProducerOptions() []kgo.Opt {
	return []kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DisableIdempotentWrite(),
		kgo.ProducerLinger(10 * time.Millisecond),
	}
}

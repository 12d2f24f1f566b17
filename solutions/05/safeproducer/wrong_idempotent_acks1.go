// A plausible wrong solution of exercise 05/safeproducer: idempotence
// turned on (so nobody pays twice) and acks=1 kept for speed. kgo refuses
// the pair when the producer is built: the broker's sequence numbers
// protect only writes every in-sync replica has, so idempotence needs
// acks=all. The grader must fail it.
package safeproducer

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func ProducerOptions() []kgo.Opt {
	return []kgo.Opt{
		kgo.RequiredAcks(kgo.LeaderAck()),
		kgo.ProducerLinger(10 * time.Millisecond),
	}
}

// A plausible wrong solution of exercise 09/trickle: a linger of seconds,
// since longer is fewer requests. It is: but every order now waits up to two
// seconds in its batch, a second more than today on average, where Brew
// allows 200 ms. The grader must fail it. (A one-second linger is as wrong,
// but on a loaded machine its fewer requests cut the queueing the defaults'
// many requests meet by about as much as it adds, so the grader's verdict
// on it depends on the machine's load.)
package trickle

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func ProducerOpts() []kgo.Opt {
	return []kgo.Opt{kgo.ProducerLinger(2 * time.Second)}
}

// A plausible wrong solution of exercise 09/trickle: a linger of a second,
// since longer is fewer requests. It is: but every order now waits up to a
// second in its batch, half a second more than today on average, where Brew
// allows 200 ms. The grader must fail it.
package trickle

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func ProducerOpts() []kgo.Opt {
	return []kgo.Opt{kgo.ProducerLinger(time.Second)}
}

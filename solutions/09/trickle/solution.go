// The reference solution of exercise 09/trickle.
package trickle

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ProducerOpts returns the order service's producer options: at a steady
// rate a batch goes out when its partition has lingered (franz-go's default
// 10 ms), so each request carries about 10 ms of orders. A 100 ms linger
// sends ten times fewer requests, each order waiting at most 100 ms more.
func ProducerOpts() []kgo.Opt {
	return []kgo.Opt{kgo.ProducerLinger(100 * time.Millisecond)}
}

// The reference solution of exercise 09/wire.
package wire

import "github.com/twmb/franz-go/pkg/kgo"

// ProducerOpts returns the mountain shops' producer options: zstd, which
// makes JSON orders about a third smaller than franz-go's default snappy
// does (lecture 09's sweep: a ratio of 9.7 against 6.6).
func ProducerOpts() []kgo.Opt {
	return []kgo.Opt{kgo.ProducerBatchCompression(kgo.ZstdCompression())}
}

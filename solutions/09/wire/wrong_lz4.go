// A plausible wrong solution of exercise 09/wire: lz4, the codec that costs
// the least CPU. It compresses JSON a little worse than franz-go's default
// snappy, so it writes more bytes, not fewer. The grader must fail it.
package wire

import "github.com/twmb/franz-go/pkg/kgo"

func ProducerOpts() []kgo.Opt {
	return []kgo.Opt{kgo.ProducerBatchCompression(kgo.Lz4Compression())}
}

// Package sweep runs the franz-go benchmark across linger and batch size, and
// across compression codecs: the two tables the lecture teaches batching and
// compression from.
package sweep

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/09-clients-throughput/bench"
)

// Config is a sweep.
type Config struct {
	Base    bench.Config
	Lingers []time.Duration
	Batches []int
	Codecs  []string
}

// Defaults: 100 000 records of 256 B; linger 0, 5 ms, 50 ms by batches of
// 16 KiB, 256 KiB, 1 MiB (no compression); then every codec at 5 ms and 256 KiB.
var Defaults = func() Config {
	b := bench.Defaults
	b.Records = 100_000
	return Config{
		Base:    b,
		Lingers: []time.Duration{0, 5 * time.Millisecond, 50 * time.Millisecond},
		Batches: []int{16 << 10, 256 << 10, 1 << 20},
		Codecs:  []string{"none", "gzip", "snappy", "lz4", "zstd"},
	}
}()

// Result is both tables' runs.
type Result struct {
	Config   Config           `json:"config"`
	Batching [][]bench.Result `json:"batching"` // [linger][batch]
	Codecs   []bench.Result   `json:"codecs"`
}

// Run sweeps.
func Run(ctx context.Context, cfg brewkit.Config, c Config, say func(string)) (Result, error) {
	res := Result{Config: c}
	for _, l := range c.Lingers {
		var row []bench.Result
		for _, b := range c.Batches {
			bc := c.Base
			bc.Linger, bc.BatchBytes, bc.Compression = l, b, "none"
			r, err := bench.Run(ctx, cfg, bc)
			if err != nil {
				return res, err
			}
			say(fmt.Sprintf("linger %s, batch %s: %.0f records/s, p99 %s", l, kib(b), r.Produce.PerSec, r.Produce.P99.Round(100*time.Microsecond)))
			row = append(row, r)
		}
		res.Batching = append(res.Batching, row)
	}
	for _, codec := range c.Codecs {
		bc := c.Base
		bc.Compression = codec
		r, err := bench.Run(ctx, cfg, bc)
		if err != nil {
			return res, err
		}
		say(fmt.Sprintf("%s: %.0f records/s, ratio %.2f", codec, r.Produce.PerSec, r.Ratio))
		res.Codecs = append(res.Codecs, r)
	}
	return res, nil
}

func kib(b int) string {
	if b >= 1<<20 && b%(1<<20) == 0 {
		return fmt.Sprintf("%dMiB", b>>20)
	}
	return fmt.Sprintf("%dKiB", b>>10)
}

// Print writes the two tables.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "producer records/s (p99) by linger and batch size; %d records of %d B, no compression\n", r.Config.Base.Records, r.Config.Base.Size)
	head := []string{"LINGER"}
	for _, b := range r.Config.Batches {
		head = append(head, "BATCH "+kib(b))
	}
	t := brewkit.NewTable(w, head...)
	for i, row := range r.Batching {
		cells := []any{r.Config.Lingers[i]}
		for _, x := range row {
			cells = append(cells, fmt.Sprintf("%.0f (%s)", x.Produce.PerSec, x.Produce.P99.Round(time.Millisecond)))
		}
		t.Row(cells...)
	}
	t.Flush()
	fmt.Fprintf(w, "\nby codec; linger %s, batch %s\n", r.Config.Base.Linger, kib(r.Config.Base.BatchBytes))
	t = brewkit.NewTable(w, "CODEC", "RECORDS/S", "MIB/S", "P99", "CPU S/M PROD", "CPU S/M CONS", "RATIO")
	for _, x := range r.Codecs {
		t.Row(x.Config.Compression, fmt.Sprintf("%.0f", x.Produce.PerSec), fmt.Sprintf("%.1f", x.Produce.MiBPerSec),
			x.Produce.P99.Round(100*time.Microsecond), fmt.Sprintf("%.2f", x.Produce.CPUPerMillion().Seconds()),
			fmt.Sprintf("%.2f", x.Consume.CPUPerMillion().Seconds()), fmt.Sprintf("%.2f", x.Ratio))
	}
	t.Flush()
}

package partitioncount

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// OrderKeyCount is how many order ids "what growing costs" hashes.
const OrderKeyCount = 10_000

// Result is a run of `make partition-count`.
type Result struct {
	Measured
	Choices []Choice // one per target, in the order of Targets
	Moves   []Move   // each key set by each growth
}

// Run measures one partition, sizes Brew's topics with the rates, and counts
// the keys that growing a topic moves.
func Run(ctx context.Context, cfg brewkit.Config, o Options) (Result, error) {
	m, err := Measure(ctx, cfg, o)
	if err != nil {
		return Result{}, err
	}
	return Result{
		Measured: m,
		Choices:  ChooseAll(Targets, m),
		Moves:    Movements([]Keys{ShopKeys(), OrderKeys(OrderKeyCount)}, Growths),
	}, nil
}

// Print writes the measurement, the partition count of each topic with its
// reasons, and the keys each growth moves. The rates vary from run to run;
// the counts chosen for Brew's topics do not (its consumers decide them,
// not a partition's throughput), and the key movements are exact.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "measured on %s: 1 partition, RF %d, acks=all, %d-byte order events\n\n", r.Topic, r.RF, r.RecordBytes)
	t := brewkit.NewTable(w, "WHAT", "RECORDS", "TIME", "RECORDS/S", "MB/S")
	t.Row("produce, 1 partition", r.Produce.Records, r.Produce.Elapsed.Round(time.Millisecond), perSecond(r.Produce), mb(r.Produce))
	t.Row("consume, 1 consumer", r.Consume.Records, r.Consume.Elapsed.Round(time.Millisecond), perSecond(r.Consume), mb(r.Consume))
	t.Flush() //nolint:errcheck // the writer's error is the caller's
	if r.Simulated {
		fmt.Fprintln(w, "embedded simulation: these rates are of an in-process simulation, not of Kafka's disks and replication")
	}

	fmt.Fprintf(w, "\npartitions = max(target / produce per partition, target / consume per consumer, consumers wanted),\n")
	fmt.Fprintf(w, "rounded up to %s: %s\n\n", roundingRule(r.Brokers), roundingWhy(r.Brokers))
	t = brewkit.NewTable(w, "TOPIC", "PEAK/S", "TARGET/S", "BY PRODUCE", "BY CONSUME", "CONSUMERS", "NOW", "PARTITIONS", "DECIDES")
	for _, c := range r.Choices {
		t.Row(c.Topic, int(math.Round(c.Peak)), int(math.Round(c.Rate())), fmt.Sprintf("%.2f", c.ByProduce), fmt.Sprintf("%.1f", c.ByConsume), c.Parallel, c.Now, c.Partitions, c.Decides)
	}
	t.Flush() //nolint:errcheck // the writer's error is the caller's

	fmt.Fprintf(w, "\nwhy:\n")
	for _, c := range r.Choices {
		fmt.Fprintf(w, "  %s: %s, %d/s; x%g headroom = %d/s\n", c.Topic, c.PeakWhy, int(math.Round(c.Peak)), c.Headroom, int(math.Round(c.Rate())))
		fmt.Fprintf(w, "    %s: %s, so %d/s a consumer: %d / %d = %.1f consumers busy\n",
			c.Consumer, c.PerRecordWhy, int(math.Round(c.ConsumePerConsumer)), int(math.Round(c.Rate())), int(math.Round(c.ConsumePerConsumer)), c.ByConsume)
		fmt.Fprintf(w, "    %s: %d consumers; writes: %.2f partitions (a partition takes %d/s)\n", c.ParallelWhy, c.Parallel, c.ByProduce, int(math.Round(c.ProducePerPartition)))
		change := "as now"
		if c.Partitions > int(c.Now) {
			change = fmt.Sprintf("now %d: grow it", c.Now)
		} else if c.Partitions < int(c.Now) {
			change = fmt.Sprintf("now %d, more than needed (partitions cannot be taken away)", c.Now)
		}
		fmt.Fprintf(w, "    %s decides: %d -> %d partitions (%s)\n", c.Decides, c.Need, c.Partitions, change)
	}
	if len(r.Choices) > 0 {
		fmt.Fprintf(w, "  one partition takes %d records/s from a producer: a topic needs more partitions for its writes alone\n", int(math.Round(r.Produce.PerSecond())))
		fmt.Fprintf(w, "  only above %d records/s at its peak (x%g headroom); Brew's consumers decide long before\n", int(r.Produce.PerSecond()/r.Choices[0].Headroom), r.Choices[0].Headroom)
	}

	fmt.Fprintf(w, "\nwhat growing costs: keys that land on another partition, with the default partitioner\n")
	fmt.Fprintf(w, "(kgo's, as Kafka's: partition = (murmur2(key) & 0x7fffffff) %% partitions)\n\n")
	header := []string{"KEYS"}
	for _, g := range Growths {
		header = append(header, fmt.Sprintf("%d -> %d", g[0], g[1]))
	}
	t = brewkit.NewTable(w, header...)
	var row []any
	for i, m := range r.Moves {
		if i%len(Growths) == 0 {
			if row != nil {
				t.Row(row...)
			}
			row = []any{m.Keys}
		}
		row = append(row, fmt.Sprintf("%d moved (%.1f%%)", m.Moved, 100*m.Share()))
	}
	if row != nil {
		t.Row(row...)
	}
	t.Flush() //nolint:errcheck // the writer's error is the caller's
	fmt.Fprintln(w, "\n6 -> 12 keeps a key on p or moves it to p+6: about half stay; 6 -> 8 keeps about a quarter, 6 -> 7\nabout a seventh (on many keys: 80 shops are few enough to stray from the shares).")
	fmt.Fprintln(w, "a key that moves breaks its order at the change: its new records go to the new partition while")
	fmt.Fprintln(w, "its older ones may still wait unread in the old one, so a consumer can see an order's OrderReady")
	fmt.Fprintln(w, "before its OrderPlaced. Grow a topic when its consumers are caught up (stop the producers,")
	fmt.Fprintln(w, "wait for lag 0, add the partitions, start again), or size it for the peak from the start.")
}

func perSecond(r Rate) string { return formatCount(int(math.Round(r.PerSecond()))) }

func mb(r Rate) string { return fmt.Sprintf("%.1f", r.MBPerSecond()) }

// roundingRule names the counts RoundUp picks from.
func roundingRule(brokers int) string {
	if brokers <= 1 {
		return "a power of 2"
	}
	return fmt.Sprintf("%d·2^k (%s)", brokers, strings.Join(firstCounts(brokers, 5), ", "))
}

func roundingWhy(brokers int) string {
	if brokers <= 1 {
		return "1, 2, 4, ... consumers share it evenly"
	}
	return fmt.Sprintf("each of the %d brokers leads as many, and 1, 2, 3, 4, 6 ... consumers share them evenly", brokers)
}

func firstCounts(brokers, n int) []string {
	var out []string
	for c := max(brokers, 1); len(out) < n; c *= 2 {
		out = append(out, fmt.Sprint(c))
	}
	return out
}

package courier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Batch is a demo's orders: n OrderPlaced events written to a topic, some of
// them replaced by poison records.
type Batch struct {
	Topic  string
	Run    string   // names the run: order ids are <run>-NNNN, the group brew.courier.<run>
	Orders int      // how many records
	Poison []int    // which of them (0-based) are poison
	Keys   int      // > 0: the orders' keys cycle over this many order ids, so one key has several events
	Seed   uint64   // the shops and items (0: 1)
	IDs    []string // filled by Write: the order id of each record, poison ones too
	// PerPartition is filled by Write: how many of the batch's records each
	// partition got.
	PerPartition map[int32]int
}

// Group is the consumer group a run's courier uses.
func (b Batch) Group() string { return "brew.courier." + b.Run }

// OrderID is the id of record i.
func (b Batch) OrderID(i int) string {
	if b.Keys > 0 {
		i %= b.Keys
	}
	return fmt.Sprintf("%s-%04d", b.Run, i)
}

// Write commits the group's start at the topic's end (so the run's courier
// reads this batch and nothing older), then writes the batch, acks=all.
func (b *Batch) Write(ctx context.Context, cl *kgo.Client) error {
	adm := kadm.NewClient(cl)
	end, err := brewkit.EndOffsets(ctx, adm, b.Topic)
	if err != nil {
		return err
	}
	start := kadm.Offsets{}
	end.Each(func(o kadm.ListedOffset) { start.AddOffset(o.Topic, o.Partition, o.Offset, -1) })
	if _, err := adm.CommitOffsets(ctx, b.Group(), start); err != nil {
		return fmt.Errorf("starting group %s at the end of %s: %w", b.Group(), b.Topic, err)
	}
	seed := b.Seed
	if seed == 0 {
		seed = 1
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	poison := map[int]bool{}
	for _, i := range b.Poison {
		poison[i] = true
	}
	b.IDs = b.IDs[:0]
	recs := make([]*kgo.Record, 0, b.Orders)
	now := time.Now()
	for i := range b.Orders {
		id := b.OrderID(i)
		b.IDs = append(b.IDs, id)
		if poison[i] {
			recs = append(recs, PoisonRecord(b.Topic, id))
			continue
		}
		ev := brewkit.NewOrder(rng, int64(i), now)
		ev.OrderID, ev.Seq, ev.Run = id, int64(i), b.Run
		recs = append(recs, ev.Record(b.Topic))
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("writing %d orders to %s: %w", b.Orders, b.Topic, err)
	}
	b.PerPartition = map[int32]int{}
	for _, r := range recs {
		b.PerPartition[r.Partition]++
	}
	return nil
}

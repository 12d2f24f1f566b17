package partitioncount

import (
	"math"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Target is what one of Brew's topics must carry, and who reads it.
type Target struct {
	Topic    string
	Now      int32   // the partitions the course creates it with
	Peak     float64 // records a second at the busiest moment
	PeakWhy  string
	Headroom float64 // Peak times this is what the topic is sized for
	// Consumer is the slowest group that reads the topic, and PerRecord
	// what it spends on a record: one consumer of it handles at most
	// 1/PerRecord records a second, however fast Kafka delivers them.
	Consumer     string
	PerRecord    time.Duration
	PerRecordWhy string
	// Parallel is how many consumers of the group should be busy at once:
	// a partition feeds at most one consumer of a group.
	Parallel    int
	ParallelWhy string
}

// Rate is the records a second the topic is sized for: Peak times Headroom.
func (t Target) Rate() float64 { return t.Peak * t.Headroom }

// promo is Brew's busiest minute: the Friday free-coffee promo of lecture 02,
// 8,000 orders a minute.
const promo = 8000.0 / 60

// Targets are Brew's topics, sized for three times the promo's peak. The
// processing times are the services' own: lecture 02's kitchen spends
// 20 ms on an order.
var Targets = []Target{
	{
		Topic: brewkit.Orders.Name, Now: brewkit.Orders.Partitions,
		Peak: promo, PeakWhy: "the Friday promo: 8,000 orders a minute (lecture 02)", Headroom: 3,
		Consumer: "kitchen-service", PerRecord: 20 * time.Millisecond, PerRecordWhy: "20 ms an order (lecture 02)",
		Parallel: 12, ParallelWhy: "the kitchen runs 12 consumers at the peak, 4 instances of 3",
	},
	{
		Topic: brewkit.Payments.Name, Now: brewkit.Payments.Partitions,
		Peak: promo, PeakWhy: "a payment for every order", Headroom: 3,
		Consumer: "order-service", PerRecord: 5 * time.Millisecond, PerRecordWhy: "5 ms to mark the order paid in PostgreSQL",
		Parallel: 3, ParallelWhy: "order-service runs 3 instances",
	},
	{
		Topic: brewkit.Kitchen.Name, Now: brewkit.Kitchen.Partitions,
		Peak: 2 * promo, PeakWhy: "two events for every order: KitchenStarted, OrderReady", Headroom: 3,
		Consumer: "courier-service", PerRecord: 5 * time.Millisecond, PerRecordWhy: "5 ms to find a free courier",
		Parallel: 3, ParallelWhy: "courier-service runs 3 instances",
	},
	{
		Topic: brewkit.Shipments.Name, Now: brewkit.Shipments.Partitions,
		Peak: promo / 2, PeakWhy: "about half the orders are delivered", Headroom: 3,
		Consumer: "analytics-service", PerRecord: time.Millisecond, PerRecordWhy: "1 ms to add a delivery to its counts",
		Parallel: 2, ParallelWhy: "analytics runs 2 instances",
	},
}

// The constraints a partition count answers to.
const (
	ByProduce  = "produce"          // what one partition takes from producers
	ByConsume  = "consume"          // what one consumer gets through
	ByParallel = "consumers wanted" // how many consumers should work at once
)

// Choice is a topic's partition count and the numbers behind it.
type Choice struct {
	Target
	ProducePerPartition float64 // measured records/s one partition takes
	ConsumePerConsumer  float64 // records/s one consumer handles: the lower of the measured read rate and 1/PerRecord
	ByProduce           float64 // Rate / ProducePerPartition
	ByConsume           float64 // Rate / ConsumePerConsumer
	Need                int     // ceil of the largest of ByProduce, ByConsume, Parallel
	Partitions          int     // Need rounded up by RoundUp
	Decides             string  // which constraint is the largest: ByProduce, ByConsume or ByParallel
}

// Choose sizes t: partitions = max(rate / producePerPartition, rate /
// consumePerConsumer, wanted consumers), rounded up to a count the brokers
// and the consumers share evenly (RoundUp).
func Choose(t Target, producePerPartition, consumePerConsumer float64, brokers int) Choice {
	c := Choice{Target: t, ProducePerPartition: producePerPartition, ConsumePerConsumer: consumePerConsumer}
	if t.PerRecord > 0 {
		c.ConsumePerConsumer = math.Min(consumePerConsumer, float64(time.Second)/float64(t.PerRecord))
	}
	c.ByProduce = divide(t.Rate(), c.ProducePerPartition)
	c.ByConsume = divide(t.Rate(), c.ConsumePerConsumer)
	largest, by := float64(t.Parallel), ByParallel
	if c.ByConsume > largest {
		largest, by = c.ByConsume, ByConsume
	}
	if c.ByProduce > largest {
		largest, by = c.ByProduce, ByProduce
	}
	c.Decides = by
	if math.IsInf(largest, 1) {
		return c // nothing measured: no count (Need and Partitions 0)
	}
	c.Need = max(1, int(math.Ceil(largest-1e-9))) // 8.0000000001 of a float division is 8
	c.Partitions = RoundUp(c.Need, brokers)
	return c
}

// divide is a/b, or +Inf when nothing was measured (b <= 0).
func divide(a, b float64) float64 {
	if b <= 0 {
		return math.Inf(1)
	}
	return a / b
}

// RoundUp is the smallest brokers·2^k that is at least need (at least
// brokers): every broker leads as many partitions, and 1, 2, 3, 4, 6, ...
// consumers share them evenly. On three brokers: 3, 6, 12, 24, 48.
func RoundUp(need, brokers int) int {
	n := max(brokers, 1)
	for n < need {
		n *= 2
	}
	return n
}

// ChooseAll sizes every target with what m measured.
func ChooseAll(targets []Target, m Measured) []Choice {
	out := make([]Choice, len(targets))
	for i, t := range targets {
		out[i] = Choose(t, m.Produce.PerSecond(), m.Consume.PerSecond(), m.Brokers)
	}
	return out
}

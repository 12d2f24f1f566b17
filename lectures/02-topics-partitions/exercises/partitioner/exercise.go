// Package partitioner is exercise 02/partitioner: place keys where Kafka's producer does.
//
// Graded on: any stand.
//
// Brew's analytics team wants to know, without asking the cluster, which
// partition of brew.orders.v1 holds a given order. Write Partition: given a
// record key and a topic's partition count, return the partition Kafka's
// default partitioner puts the record in (the Java producer's, which
// franz-go's default copies). The grader produces 1,000 keyed orders to
// topics of 6 and 7 partitions, reads back where the cluster stored each one,
// and compares with your answer for every key.
package partitioner

// Partition returns the partition, in [0, partitions), that Kafka's default
// partitioner chooses for a record with this key.
func Partition(key []byte, partitions int) int {
	// TODO: hash the key as Kafka does and map the hash onto a partition.
	return 0
}

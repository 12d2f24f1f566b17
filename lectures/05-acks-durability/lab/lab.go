// Package lab holds what this lecture's programs share: a partition's
// leader, followers and ISR, and reading every record back to count what the
// broker really stored.
package lab

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Replicas returns partition p's leader and its followers, as metadata has them.
func Replicas(ctx context.Context, adm *kadm.Client, topic string, p int32) (leader int32, followers []int32, err error) {
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return -1, nil, err
	}
	pd, ok := td[topic].Partitions[p]
	if !ok {
		return -1, nil, fmt.Errorf("%s has no partition %d", topic, p)
	}
	for _, r := range pd.Replicas {
		if r != pd.Leader {
			followers = append(followers, r)
		}
	}
	return pd.Leader, followers, nil
}

// ISR returns partition p's in-sync replicas, as metadata has them.
func ISR(ctx context.Context, adm *kadm.Client, topic string, p int32) ([]int32, error) {
	td, err := adm.ListTopics(kadm.WithAuthorizedOps(ctx), topic)
	if err != nil {
		return nil, err
	}
	return td[topic].Partitions[p].ISR, nil
}

// ReadAll reads topic from its start to its current end and returns the
// records' values, in partition and offset order.
func ReadAll(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, topic string) ([]*kgo.Record, error) {
	ends, err := brewkit.EndOffsets(ctx, adm, topic)
	if err != nil {
		return nil, err
	}
	var out []*kgo.Record
	err = brewkit.ReadTo(ctx, cfg, topic, nil, ends, 30*time.Second, func(r *kgo.Record) { out = append(out, r) })
	return out, err
}

// Seq numbers the records a lecture program writes: "<run>-<n>" in the value
// lets the read-back count copies of each.
func Seq(run string, n int) []byte { return []byte(run + "-" + strconv.Itoa(n)) }

// SeqOf returns n of a value Seq(run, n) made.
func SeqOf(value []byte, run string) (int, bool) {
	rest, ok := strings.CutPrefix(string(value), run+"-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil
}

// Copies counts the stored copies of each of this run's records.
func Copies(recs []*kgo.Record, run string) map[string]int {
	out := map[string]int{}
	for _, r := range recs {
		if v := string(r.Value); strings.HasPrefix(v, run+"-") {
			out[v]++
		}
	}
	return out
}

// Batch is one record batch as the broker stores it: what an idempotent
// producer stamps on it, and where it landed.
type Batch struct {
	BaseOffset    int64 `json:"base_offset"`
	Records       int32 `json:"records"`
	ProducerID    int64 `json:"producer_id"`    // -1: written without idempotence
	ProducerEpoch int16 `json:"producer_epoch"` // -1 likewise
	FirstSequence int32 `json:"first_sequence"` // the producer's number for the batch's first record
}

// Batches reads the record batches of partition p from its leader with a raw
// Fetch: kgo hands out records, not the batch headers idempotence lives in.
func Batches(ctx context.Context, cl *kgo.Client, topic string, p, leader int32) ([]Batch, error) {
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 500, 1, 50<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		return nil, err
	}
	rt.TopicID = td[topic].ID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, 0, 50<<20
	rp.CurrentLeaderEpoch, rp.LogStartOffset = -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl.Broker(int(leader)))
	if err != nil {
		return nil, fmt.Errorf("fetching the batches of %s-%d: %w", topic, p, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, fmt.Errorf("fetching the batches of %s-%d: %w", topic, p, err)
	}
	var out []Batch
	for _, t := range resp.Topics {
		for _, pr := range t.Partitions {
			if err := kerr.ErrorForCode(pr.ErrorCode); err != nil {
				return nil, fmt.Errorf("fetching the batches of %s-%d: %w", topic, p, err)
			}
			raw := pr.RecordBatches
			for len(raw) >= 12 {
				length := int(int32(binary.BigEndian.Uint32(raw[8:12])))
				if len(raw) < 12+length {
					break // a partial batch at the end of the response
				}
				var b kmsg.RecordBatch
				if err := b.ReadFrom(raw[:12+length]); err != nil {
					return nil, fmt.Errorf("decoding a batch of %s-%d: %w", topic, p, err)
				}
				raw = raw[12+length:]
				if b.Attributes&0x20 != 0 {
					continue // a control batch (transaction marker)
				}
				out = append(out, Batch{BaseOffset: b.FirstOffset, Records: b.NumRecords,
					ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch, FirstSequence: b.FirstSequence})
			}
		}
	}
	return out, nil
}

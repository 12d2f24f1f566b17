package lag

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// ReadMaxBytes bounds what one partition's fetch brings back: the broker
// sends at least the batch that holds the record asked for, and at most
// this much more.
const ReadMaxBytes = 64 << 10

// at is a record to read: a partition's offset.
type at struct {
	tp
	offset int64
}

// oldest reads the record at OldestOffset of every lagging partition of
// groups and sets its TimeLag, with "now" taken once every record is read,
// which it returns. Each offset is read once, however many groups wait on
// it; a partition two groups wait on at different offsets is read once per
// offset, the rounds one after the other. A partition no record came from
// within ctx keeps TimeLag -1 and says so in Note.
func oldest(ctx context.Context, cfg brewkit.Config, groups []Group) time.Time {
	waiting := map[at][]*Partition{}
	ends := map[tp]int64{}
	for gi := range groups {
		for pi := range groups[gi].Partitions {
			p := &groups[gi].Partitions[pi]
			if p.Lag <= 0 || p.OldestOffset < 0 || p.Err != nil {
				continue
			}
			a := at{tp{p.Topic, p.Partition}, p.OldestOffset}
			waiting[a] = append(waiting[a], p)
			ends[a.tp] = max(ends[a.tp], p.End)
		}
	}
	read := map[at]result{}
	for ctx.Err() == nil {
		round := map[tp]int64{} // each partition's lowest offset not read yet
		for a := range waiting {
			if _, ok := read[a]; ok {
				continue
			}
			if o, ok := round[a.tp]; !ok || a.offset < o {
				round[a.tp] = a.offset
			}
		}
		if len(round) == 0 {
			break
		}
		got := readRound(ctx, cfg, round, ends)
		for t, o := range round {
			if r, ok := got[t]; ok {
				read[at{t, o}] = r
			}
		}
		if len(got) < len(round) {
			break // ctx ended
		}
	}
	now := time.Now()
	for a, ps := range waiting {
		r, ok := read[a]
		for _, p := range ps {
			switch {
			case !ok:
				p.OldestOffset = -1
				p.Note = fmt.Sprintf("no record read at offset %d within the measurement's time: TIME-LAG unknown", a.offset)
			case r.err != nil:
				p.OldestOffset = -1
				p.Err = fmt.Errorf("reading the record at offset %d: %w", a.offset, r.err)
			case r.rec == nil: // only transaction markers wait
				p.TimeLag, p.OldestOffset = 0, -1
				p.Note = "only transaction markers are left after COMMITTED: no record waits"
			default:
				p.Oldest, p.OldestOffset = r.rec.Timestamp, r.rec.Offset
				p.TimeLag = max(now.Sub(r.rec.Timestamp), 0) // a producer's clock ahead of ours: 0
			}
		}
	}
	return now
}

// result is what reading one offset gave: the first record at or after it,
// nil when only control records are left before the end, or an error.
type result struct {
	rec *kgo.Record
	err error
}

// readRound reads, with one client, the first record at or after the offset
// round gives each partition, until every partition gave one or ctx ends.
func readRound(ctx context.Context, cfg brewkit.Config, round map[tp]int64, ends map[tp]int64) map[tp]result {
	got := map[tp]result{}
	offsets := map[string]map[int32]kgo.Offset{}
	for t, o := range round {
		if offsets[t.topic] == nil {
			offsets[t.topic] = map[int32]kgo.Offset{}
		}
		offsets[t.topic][t.partition] = kgo.NewOffset().At(o)
	}
	cl, err := brewkit.NewClient(cfg,
		kgo.ConsumePartitions(offsets),
		// An offset deleted since the start offsets were listed: the
		// first record kept is the oldest unprocessed one left.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.KeepControlRecords(), // a transaction marker is no record to wait for
		kgo.FetchMaxPartitionBytes(ReadMaxBytes),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.KeepRetryableFetchErrors(),
	)
	if err != nil {
		for t := range round {
			got[t] = result{err: err}
		}
		return got
	}
	defer cl.Close()
	for len(got) < len(round) && ctx.Err() == nil {
		fs := cl.PollRecords(ctx, 0)
		fs.EachError(func(topic string, partition int32, err error) {
			t := tp{topic, partition}
			if _, ok := round[t]; !ok || fatal(err) == nil {
				return
			}
			if _, done := got[t]; !done {
				got[t] = result{err: err}
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			t := tp{r.Topic, r.Partition}
			from, ok := round[t]
			if _, done := got[t]; !ok || done || r.Offset < from {
				return
			}
			if r.Attrs.IsControl() {
				if r.Offset+1 >= ends[t] {
					got[t] = result{} // nothing but markers up to the end
				}
				return
			}
			got[t] = result{rec: r}
		})
	}
	return got
}

// fatal is err when reading cannot go on (authorization, a corrupt batch),
// nil for what kgo retries by itself and a read cut short.
func fatal(err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, kgo.ErrClientClosed):
		return nil
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
		return nil // a topic just created; one deleted ends as "not read in time"
	case kerr.IsRetriable(err), kgo.IsRetryableBrokerErr(err):
		return nil
	}
	var dataLoss *kgo.ErrDataLoss
	if errors.As(err, &dataLoss) {
		return nil // kgo resets to the log start: the next record read is the oldest kept
	}
	return err
}

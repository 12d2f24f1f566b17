// Package retention shows how Kafka forgets: a topic with a short retention
// and small segments is written to steadily, and the log start offset moves —
// not record by record, but a whole closed segment at a time, when the
// segment's newest record is older than retention.ms (or the partition is
// bigger than retention.bytes). DeleteRecords moves it by hand, to any offset.
package retention

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// Config sets up a run.
type Config struct {
	By        string        // "time" (retention.ms) or "bytes" (retention.bytes)
	Retention time.Duration // retention.ms when By is time
	Bytes     int64         // retention.bytes when By is bytes
	Segment   time.Duration // segment.ms: how often the active segment rolls
	Rate      int           // records per second
	Value     int           // bytes of each record's value
	Duration  time.Duration // how long to write and watch
}

// Defaults: 15 s retention, a new segment every 3 s, 20 records a second for 40 s.
var Defaults = Config{By: "time", Retention: 15 * time.Second, Bytes: 64 << 10, Segment: 3 * time.Second, Rate: 20, Value: 512, Duration: 40 * time.Second}

// Step is one observed move of the log start offset.
type Step struct {
	At   time.Duration `json:"at"`
	From int64         `json:"from"`
	To   int64         `json:"to"`
	End  int64         `json:"end"`
	// Segments are the base offsets of the segment files on the leader's disk
	// just before the move, when this machine can see them (native stand).
	Segments []int64 `json:"segments,omitempty"`
}

// Result is what a run saw.
type Result struct {
	Topic     string        `json:"topic"`
	Configs   []string      `json:"configs"`
	Steps     []Step        `json:"steps"`
	FirstMove time.Duration `json:"first_move"` // from the first write until the log start first moved
	Deleted   int64         `json:"delete_records_to"`
	StartNow  int64         `json:"log_start_after_delete_records"`
	Simulated bool          `json:"simulated"`
}

// Run creates a fresh one-partition topic, writes to it for c.Duration,
// reports every move of its log start offset, then moves it once more with
// DeleteRecords, and deletes the topic.
func Run(ctx context.Context, cfg brewkit.Config, c Config, say func(string)) (Result, error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer cl.Close()
	var res Result
	if res.Simulated, err = brewkit.IsSimulated(ctx, cl); err != nil {
		return res, err
	}
	configs := c.topicConfigs()
	for _, k := range []string{"retention.ms", "retention.bytes", "segment.ms"} {
		if v, ok := configs[k]; ok {
			res.Configs = append(res.Configs, k+"="+v)
		}
	}
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.clickstream.", Partitions: 1, Configs: configs})
	if err != nil {
		return res, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover demo topic is harmless
	res.Topic = topic
	say(fmt.Sprintf("topic %s, 1 partition: %s", res.Topic, strings.Join(res.Configs, " ")))
	say(fmt.Sprintf("writing %d records/s of %d bytes for %s; watching the log start offset", c.Rate, c.Value, c.Duration))
	if err := writeAndWatch(ctx, cfg, adm, c, &res, say); err != nil {
		return res, err
	}
	if err := deleteHalf(ctx, adm, &res); err != nil {
		return res, err
	}
	say(fmt.Sprintf("DeleteRecords up to offset %d: the log start offset is now %d (any offset, not a segment boundary)", res.Deleted, res.StartNow))
	return res, nil
}

// topicConfigs are the topic's retention by time or by bytes, and its
// segment.ms: retention deletes whole segments, so segments roll often.
func (c Config) topicConfigs() map[string]string {
	configs := map[string]string{"segment.ms": ms(c.Segment)}
	if c.By == "bytes" {
		configs["retention.ms"] = "-1"
		configs["retention.bytes"] = strconv.FormatInt(c.Bytes, 10)
	} else {
		configs["retention.ms"] = ms(c.Retention)
	}
	return configs
}

// writeAndWatch writes c.Rate records a second for c.Duration and looks at
// the partition's log start offset four times a second, noting each move
// (and the segments there were just before it) as a step.
func writeAndWatch(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, c Config, res *Result, say func(string)) error {
	segs := segmentFiles(ctx, adm, res.Topic)
	// Random bytes, sent uncompressed: the partition grows by what is written,
	// which retention.bytes counts.
	prod, err := brewkit.NewClient(cfg, kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return err
	}
	defer prod.Close()
	value := make([]byte, c.Value)
	start := time.Now()
	tick := time.NewTicker(time.Second / time.Duration(c.Rate))
	defer tick.Stop()
	look := time.NewTicker(250 * time.Millisecond)
	defer look.Stop()
	var logStart int64
	var lastSegs []int64
	var produceErr atomic.Pointer[error]
	for time.Since(start) < c.Duration {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			crand.Read(value) //nolint:errcheck // crypto/rand.Read does not fail
			prod.Produce(ctx, &kgo.Record{Topic: res.Topic, Value: slices.Clone(value)}, func(_ *kgo.Record, err error) {
				if err != nil {
					produceErr.CompareAndSwap(nil, &err)
				}
			})
		case <-look.C:
			if err := produceErr.Load(); err != nil {
				return fmt.Errorf("writing to %s: %w", res.Topic, *err)
			}
			s, e, err := bounds(ctx, adm, res.Topic)
			if err != nil {
				continue
			}
			if s > logStart {
				step := Step{At: time.Since(start), From: logStart, To: s, End: e, Segments: lastSegs}
				res.Steps = append(res.Steps, step)
				if res.FirstMove == 0 {
					res.FirstMove = step.At
				}
				say(step.String())
				logStart = s
			}
			lastSegs = segs()
		}
	}
	if err := prod.Flush(ctx); err != nil {
		return err
	}
	if err := produceErr.Load(); err != nil {
		return fmt.Errorf("writing to %s: %w", res.Topic, *err)
	}
	return nil
}

// deleteHalf moves the log start with DeleteRecords to halfway between it
// and the end: exactly to the offset asked for. Retention first goes off,
// so that from then on only DeleteRecords moves the log start (a retention
// check could otherwise overtake it).
func deleteHalf(ctx context.Context, adm *kadm.Client, res *Result) error {
	off := "-1"
	alter := []kadm.AlterConfig{{Name: "retention.ms", Value: &off}, {Name: "retention.bytes", Value: &off}}
	ar, err := adm.AlterTopicConfigs(ctx, alter, res.Topic)
	if err == nil {
		var r kadm.AlterConfigsResponse
		r, err = ar.On(res.Topic, nil)
		if err == nil {
			err = r.Err
		}
	}
	if err != nil {
		return fmt.Errorf("switching retention off before DeleteRecords: %w", err)
	}
	logStart, end, err := bounds(ctx, adm, res.Topic)
	if err != nil {
		return err
	}
	res.Deleted = logStart + (end-logStart)/2
	var to kadm.Offsets
	to.Add(kadm.Offset{Topic: res.Topic, Partition: 0, At: res.Deleted})
	dr, err := adm.DeleteRecords(ctx, to)
	if err != nil {
		return fmt.Errorf("DeleteRecords: %w", err)
	}
	if err := dr.Error(); err != nil {
		return fmt.Errorf("DeleteRecords: %w", err)
	}
	res.StartNow, _, err = bounds(ctx, adm, res.Topic)
	return err
}

func (s Step) String() string {
	line := fmt.Sprintf("%5.1fs  log start %d -> %d (end %d)", s.At.Seconds(), s.From, s.To, s.End)
	if len(s.Segments) > 0 {
		line += fmt.Sprintf("; segments on the leader's disk before: %v", s.Segments)
	}
	return line
}

// OnBoundary reports whether each move landed on a segment's base offset, for
// the steps where the segments were seen.
func (r Result) OnBoundary() (checked int, ok bool) {
	for _, s := range r.Steps {
		if len(s.Segments) == 0 {
			continue
		}
		checked++
		if !slices.Contains(s.Segments, s.To) {
			return checked, false
		}
	}
	return checked, true
}

func bounds(ctx context.Context, adm *kadm.Client, topic string) (int64, int64, error) {
	s, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	e, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	so, _ := s.Lookup(topic, 0)
	eo, _ := e.Lookup(topic, 0)
	if so.Err != nil || eo.Err != nil {
		return 0, 0, fmt.Errorf("offsets of %s: %v %v", topic, so.Err, eo.Err)
	}
	return so.Offset, eo.Offset, nil
}

// segmentFiles returns a function listing the base offsets of the partition's
// segment files on its leader's disk. Only the native and docker stands let
// us look at a node's files; elsewhere the function returns nothing.
func segmentFiles(ctx context.Context, adm *kadm.Client, topic string) func() []int64 {
	s, err := stand.Find()
	if err != nil || (s.Current() != stand.Native && s.Current() != stand.Docker) {
		return func() []int64 { return nil }
	}
	return func() []int64 {
		td, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return nil
		}
		p, ok := td[topic].Partitions[0]
		if !ok || p.Leader < 1 {
			return nil
		}
		names, err := s.ReadDataDir(ctx, int(p.Leader), topic+"-0")
		if err != nil {
			return nil
		}
		var bases []int64
		for _, name := range names {
			base, ok := strings.CutSuffix(name, ".log")
			if !ok {
				continue
			}
			if n, err := strconv.ParseInt(base, 10, 64); err == nil {
				bases = append(bases, n)
			}
		}
		slices.Sort(bases)
		return bases
	}
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

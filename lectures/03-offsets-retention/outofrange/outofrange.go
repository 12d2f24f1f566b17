// Package outofrange shows what auto.offset.reset does when a group's
// committed offset no longer exists: the log start has moved past it (by
// retention, or here by DeleteRecords), so the consumer's first fetch at the
// committed offset is answered OFFSET_OUT_OF_RANGE, and the consumer resumes
// where auto.offset.reset says: at the log start (earliest) or at the log
// end (latest), skipping every record still stored.
package outofrange

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// The run's numbers: records written, the offset both groups commit, and
// where DeleteRecords moves the log start.
const (
	Written   = 100
	Committed = 30
	LogStart  = 60
)

// Group is what one group's consumer did when it started again.
type Group struct {
	Name      string `json:"group"`
	Reset     string `json:"auto_offset_reset"` // earliest or latest
	Committed int64  `json:"committed"`         // what the group had committed, read back after DeleteRecords
	Refused   int64  `json:"refused"`           // the offset whose fetch the broker answered OFFSET_OUT_OF_RANGE
	ResumedAt int64  `json:"resumed_at"`        // where the consumer went on, by auto.offset.reset
	FirstRead int64  `json:"first_read"`
	Read      int    `json:"read"` // records read
}

// Result is one run.
type Result struct {
	Topic     string  `json:"topic"`
	LogStart  int64   `json:"log_start"` // after DeleteRecords
	LogEnd    int64   `json:"log_end"`   // before the consumers start again
	Groups    []Group `json:"groups"`
	Simulated bool    `json:"simulated"`
}

// Run writes Written records to a new one-partition topic, commits offset
// Committed for two new groups, moves the log start to LogStart with
// DeleteRecords, and starts one consumer per group: one with
// auto.offset.reset=earliest, one with latest. It deletes the topic and the
// groups at the end. say receives the narrative.
func Run(ctx context.Context, cfg brewkit.Config, say func(string)) (Result, error) {
	var res Result
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	if res.Simulated, err = brewkit.IsSimulated(ctx, cl); err != nil {
		return res, err
	}
	topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.clickstream.", Partitions: 1})
	if err != nil {
		return res, err
	}
	defer drop(ctx) //nolint:errcheck // a leftover demo topic is harmless
	res.Topic = topic
	suffix := strconv.Itoa(rand.IntN(1e6))
	groups := []Group{
		{Name: "brew.report.earliest." + suffix, Reset: "earliest"},
		{Name: "brew.report.latest." + suffix, Reset: "latest"},
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		adm.DeleteGroups(dctx, groups[0].Name, groups[1].Name) //nolint:errcheck // leftover demo groups are harmless
	}()

	if err := write(ctx, cfg, topic, 0, Written); err != nil {
		return res, err
	}
	say(fmt.Sprintf("topic %s, 1 partition: %d records written, offsets 0-%d", topic, Written, Written-1))
	for _, g := range groups {
		var o kadm.Offsets
		o.Add(kadm.Offset{Topic: topic, Partition: 0, At: Committed, LeaderEpoch: -1})
		resp, err := adm.CommitOffsets(ctx, g.Name, o)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			return res, fmt.Errorf("committing offset %d for %s: %w", Committed, g.Name, err)
		}
	}
	say(fmt.Sprintf("groups %s and %s have read offsets 0-%d and committed offset %d", groups[0].Name, groups[1].Name, Committed-1, Committed))

	var to kadm.Offsets
	to.Add(kadm.Offset{Topic: topic, Partition: 0, At: LogStart})
	dr, err := adm.DeleteRecords(ctx, to)
	if err == nil {
		err = dr.Error()
	}
	if err != nil {
		return res, fmt.Errorf("DeleteRecords up to %d: %w", LogStart, err)
	}
	if res.LogStart, res.LogEnd, err = bounds(ctx, adm, topic); err != nil {
		return res, err
	}
	for i := range groups {
		if groups[i].Committed, err = committed(ctx, adm, groups[i].Name, topic); err != nil {
			return res, err
		}
	}
	say(fmt.Sprintf("DeleteRecords up to %d: the log start is %d, the committed offset %d is kept but its record is gone (retention moves the log start the same way)",
		LogStart, res.LogStart, groups[0].Committed))

	for _, g := range groups {
		got, err := restart(ctx, cfg, topic, g, res.LogEnd)
		if err != nil {
			return res, err
		}
		res.Groups = append(res.Groups, got)
	}
	return res, nil
}

// restart runs g's consumer until it has read what it will read: from where
// it resumed to the log end (earliest), or the one record written once it
// has resumed (latest).
func restart(ctx context.Context, cfg brewkit.Config, topic string, g Group, end int64) (Group, error) {
	reset := kgo.NewOffset().AtStart()
	if g.Reset == "latest" {
		reset = kgo.NewOffset().AtEnd()
	}
	lg := newResetLog(topic)
	cl, err := brewkit.NewClient(cfg,
		kgo.ConsumerGroup(g.Name),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(reset), // auto.offset.reset
		kgo.DisableAutoCommit(),
		kgo.WithLogger(lg),
	)
	if err != nil {
		return g, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()

	// The reader keeps polling; it is done once it has read to the log end
	// (earliest) or read anything at all (latest).
	var mu sync.Mutex
	first, read := int64(-1), 0
	polled := make(chan error, 1)
	go func() {
		var check brewkit.FetchCheck
		for {
			fs, err := check.Poll(ctx, cl, 0)
			if err != nil {
				polled <- err
				return
			}
			mu.Lock()
			fs.EachRecord(func(r *kgo.Record) {
				if first < 0 {
					first = r.Offset
				}
				read++
			})
			done := read > 0 && (g.Reset == "latest" || first+int64(read) >= end)
			mu.Unlock()
			if done {
				polled <- nil
				return
			}
		}
	}()

	select {
	case g.ResumedAt = <-lg.resumed:
		g.Refused = lg.refusedAt()
	case err := <-polled:
		return g, fmt.Errorf("%s: %w", g.Name, err)
	case <-ctx.Done():
		return g, fmt.Errorf("%s: the consumer was not reset within 30 s: %w", g.Name, ctx.Err())
	}
	if g.Reset == "latest" {
		// Only now is there anything for it to read: one new record.
		if err := write(ctx, cfg, topic, end, 1); err != nil {
			return g, err
		}
	}
	if err := <-polled; err != nil {
		return g, fmt.Errorf("%s: reading after the reset: %w", g.Name, err)
	}
	mu.Lock()
	defer mu.Unlock()
	g.FirstRead, g.Read = first, read
	return g, nil
}

// resetLog hears from the client what it did with its committed offset: the
// fetch the broker refused with OFFSET_OUT_OF_RANGE (an info line) and the
// offset the reset's ListOffsets gave it (a debug line).
type resetLog struct {
	topic   string
	mu      sync.Mutex
	refused int64
	resumed chan int64
	once    sync.Once
}

func newResetLog(topic string) *resetLog {
	return &resetLog{topic: topic, refused: -1, resumed: make(chan int64, 1)}
}

func (l *resetLog) refusedAt() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refused
}

// Level implements kgo.Logger: debug, for the reset's result.
func (l *resetLog) Level() kgo.LogLevel { return kgo.LogLevelDebug }

// Log implements kgo.Logger.
func (l *resetLog) Log(_ kgo.LogLevel, msg string, keyvals ...any) {
	switch msg {
	case "received OFFSET_OUT_OF_RANGE on the first fetch, resetting to the configured ConsumeResetOffset":
		for i := 0; i+1 < len(keyvals); i += 2 {
			if keyvals[i] == "prior_offset" {
				if o, ok := keyvals[i+1].(int64); ok {
					l.mu.Lock()
					l.refused = o
					l.mu.Unlock()
				}
			}
		}
	case "handled list results":
		for i := 0; i+1 < len(keyvals); i += 2 {
			using, ok := keyvals[i+1].(map[string]map[int32]kgo.EpochOffset)
			if keyvals[i] != "using" || !ok {
				continue
			}
			if eo, ok := using[l.topic][0]; ok && l.refusedAt() >= 0 {
				l.once.Do(func() { l.resumed <- eo.Offset })
			}
		}
	}
}

// Print writes the result as the README shows it.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "the groups' consumers start again at their committed offset; the log is now %d-%d:\n\n", r.LogStart, r.LogEnd-1)
	t := brewkit.NewTable(w, "GROUP", "AUTO.OFFSET.RESET", "COMMITTED", "BROKER'S ANSWER", "RESUMED AT", "READ")
	for _, g := range r.Groups {
		answer := "records"
		if g.Refused == g.Committed {
			answer = "OFFSET_OUT_OF_RANGE"
		}
		read := fmt.Sprintf("%d-%d (%d records)", g.FirstRead, g.FirstRead+int64(g.Read)-1, g.Read)
		if g.Read == 1 {
			read = fmt.Sprintf("%d (1 record, written after it resumed)", g.FirstRead)
		}
		t.Row(g.Name, g.Reset, g.Committed, answer, g.ResumedAt, read)
	}
	t.Flush()
	fmt.Fprintf(w, "\nearliest re-read every record still stored; latest skipped them: %d records it never processed\n", r.LogEnd-r.LogStart)
}

// write produces n records to partition 0 of topic, numbered from first.
func write(ctx context.Context, cfg brewkit.Config, topic string, first int64, n int) error {
	cl, err := brewkit.NewClient(cfg, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	var rs []*kgo.Record
	for i := range int64(n) {
		rs = append(rs, &kgo.Record{Topic: topic, Partition: 0, Value: []byte("click " + strconv.FormatInt(first+i, 10))})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("writing to %s: %w", topic, err)
	}
	return nil
}

func bounds(ctx context.Context, adm *kadm.Client, topic string) (start, end int64, err error) {
	s, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return 0, 0, fmt.Errorf("start offset of %s: %w", topic, err)
	}
	e, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, 0, fmt.Errorf("end offset of %s: %w", topic, err)
	}
	so, _ := s.Lookup(topic, 0)
	eo, _ := e.Lookup(topic, 0)
	if so.Err != nil || eo.Err != nil {
		return 0, 0, fmt.Errorf("offsets of %s: %v %v", topic, so.Err, eo.Err)
	}
	return so.Offset, eo.Offset, nil
}

func committed(ctx context.Context, adm *kadm.Client, group, topic string) (int64, error) {
	os, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return 0, fmt.Errorf("committed offsets of %s: %w", group, err)
	}
	o, ok := os.Lookup(topic, 0)
	if !ok {
		return -1, nil
	}
	return o.At, o.Err
}

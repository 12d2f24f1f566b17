// Package commits shows what each way of committing offsets does when a
// consumer dies in the middle of a batch. For each style a consumer process
// reads a fresh one-partition topic in batches, dies by SIGKILL after a fixed
// number of records, and is started again; the records both runs processed
// were re-read (at-least-once), the records neither processed were skipped
// (at-most-once).
package commitstyles

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/06-consumer-groups/groups"
)

// Style is when a consumer commits what it read.
type Style string

// The styles, in the lecture's order.
const (
	// Auto is franz-go's default autocommit: every interval it commits what
	// earlier polls returned. A poll's records become committable when the
	// next poll starts, so what is being processed is never committed.
	Auto Style = "auto"
	// Greedy is kgo.GreedyAutoCommit, what a naive auto-commit does: it
	// commits everything polled, processed or not.
	Greedy Style = "greedy"
	// Record commits each record, synchronously, after processing it.
	Record Style = "record"
	// Batch commits once per poll, synchronously, after processing all of it.
	Batch Style = "batch"
	// Async commits each record after processing it without waiting for the
	// broker's answer (kgo's CommitOffsets).
	Async Style = "async"
)

// Styles lists them in the lecture's order.
var Styles = []Style{Auto, Greedy, Record, Batch, Async}

// ParseStyle accepts the names above.
func ParseStyle(s string) (Style, error) {
	if st := Style(s); slices.Contains(Styles, st) {
		return st, nil
	}
	return "", fmt.Errorf("unknown commit style %q: use auto, greedy, record, batch or async", s)
}

// Guarantee is what the style promises when a consumer crashes.
func (s Style) Guarantee() string {
	if s == Greedy {
		return "at-most-once"
	}
	return "at-least-once"
}

// The consumer's settings: batches of BatchSize records, Work per record,
// autocommit every AutoCommitEvery. A batch takes 1 s, so the autocommit runs
// several times inside each.
const (
	BatchSize       = 20
	Work            = 50 * time.Millisecond
	AutoCommitEvery = 200 * time.Millisecond
)

// Step is what a consumer process reports, one JSON line each.
type Step struct {
	Kind   string        `json:"kind"`             // processed, commit, waited
	Offset int64         `json:"offset,omitempty"` // processed: the record's; commit: the offset committed
	Took   time.Duration `json:"took,omitempty"`   // waited: time the loop spent in a commit call
}

// Consumer is one consumer process's job.
type Consumer struct {
	Group, Topic string
	Style        Style
	CrashAfter   int   // SIGKILL itself after processing this many records (0: never)
	Until        int64 // stop after processing the record before this offset
}

// Run consumes as c describes and reports each processed record and each
// commit the broker confirmed, with the offset it committed. With CrashAfter
// it kills its own process with SIGKILL right after processing that record,
// before committing it: no deferred code, no leave-group, no last commit runs.
func (c Consumer) Run(ctx context.Context, cfg brewkit.Config, report func(Step)) error {
	var head atomic.Int64 // the highest offset the broker confirmed
	committed := confirmed(func(o int64) {
		if o > head.Load() {
			head.Store(o)
		}
		report(Step{Kind: "commit", Offset: o})
	})
	opts := append(groups.Cooperative.Opts(),
		kgo.ConsumerGroup(c.Group),
		kgo.ConsumeTopics(c.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.KeepRetryableFetchErrors(),
	)
	switch c.Style {
	case Auto:
		opts = append(opts, kgo.AutoCommitInterval(AutoCommitEvery), kgo.AutoCommitCallback(committed))
	case Greedy:
		opts = append(opts, kgo.AutoCommitInterval(AutoCommitEvery), kgo.GreedyAutoCommit(), kgo.AutoCommitCallback(committed))
	default:
		opts = append(opts, kgo.DisableAutoCommit())
	}
	cl, err := brewkit.NewClient(cfg, opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	var check brewkit.FetchCheck
	processed := 0
	var polled, polledBefore int64 // the offset after the last record of this poll, and of the ones before
	for ctx.Err() == nil {
		fs, err := check.Poll(ctx, cl, BatchSize)
		if err != nil {
			return err
		}
		if rs := fs.Records(); len(rs) > 0 {
			polledBefore, polled = polled, rs[len(rs)-1].Offset+1
		}
		for _, r := range fs.Records() {
			time.Sleep(Work) // the work a real consumer does per record
			report(Step{Kind: "processed", Offset: r.Offset})
			processed++
			if processed == c.CrashAfter {
				// The autocommit runs behind the loop every 200 ms: by now
				// it has sent what the style commits (the earlier polls'
				// records; greedy, this poll's too). Its answer may still
				// be on the way; the kill waits for it (up to 5 s), or the
				// broker would hold a commit the report never saw.
				want := map[Style]int64{Auto: polledBefore, Greedy: polled}[c.Style]
				_ = brewkit.WaitFor(ctx, 5*time.Second, 10*time.Millisecond, func() bool { return head.Load() >= want })
				brewkit.Crash()
			}
			start := time.Now()
			switch c.Style {
			case Record:
				if err := cl.CommitRecords(ctx, r); err != nil {
					return fmt.Errorf("committing offset %d: %w", r.Offset+1, err)
				}
				report(Step{Kind: "waited", Took: time.Since(start)})
				report(Step{Kind: "commit", Offset: r.Offset + 1})
			case Async:
				next := map[string]map[int32]kgo.EpochOffset{r.Topic: {r.Partition: {Epoch: r.LeaderEpoch, Offset: r.Offset + 1}}}
				cl.CommitOffsets(ctx, next, committed) // returns at once; the commit goes out behind the loop
				report(Step{Kind: "waited", Took: time.Since(start)})
			}
			if c.Until > 0 && r.Offset+1 >= c.Until {
				return nil
			}
		}
		if c.Style == Batch && len(fs.Records()) > 0 {
			start := time.Now()
			if err := cl.CommitUncommittedOffsets(ctx); err != nil {
				return fmt.Errorf("committing the batch: %w", err)
			}
			report(Step{Kind: "waited", Took: time.Since(start)})
			report(Step{Kind: "commit", Offset: cl.CommittedOffsets()[c.Topic][0].Offset})
		}
	}
	return nil
}

// confirmed is a commit callback that calls each with every offset the
// broker confirmed. An autocommit that a slow answer made the client send
// again confirms the same offset twice: counting distinct offsets counts the
// times the committed offset moved.
func confirmed(each func(offset int64)) func(*kgo.Client, *kmsg.OffsetCommitRequest, *kmsg.OffsetCommitResponse, error) {
	return func(_ *kgo.Client, req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			return
		}
		sent := map[int32]int64{} // the consumer commits one topic
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				sent[p.Partition] = p.Offset
			}
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if o, ok := sent[p.Partition]; ok && p.ErrorCode == 0 {
					each(o)
				}
			}
		}
	}
}

// Config is the demonstration.
type Config struct {
	Consumer   []string // the command that runs one consumer process; Run adds its flags
	Records    int      // orders on the topic
	CrashAfter int      // the first process dies after this many
}

// Defaults: 60 orders, three batches of 20; the crash comes 15 records
// into the second batch.
var Defaults = Config{Records: 60, CrashAfter: 35}

// Row is one style's run.
type Row struct {
	Style Style `json:"style"`
	// Commits is how many times the committed offset moved before the
	// kill: the distinct offsets of the commits the broker confirmed.
	Commits int `json:"commits_before_the_kill"`
	// Waited is the time the first run's loop spent in commit calls
	// (autocommit commits in the background: none).
	Waited     time.Duration `json:"waited_for_commits"`
	BeforeKill int           `json:"processed_before_the_kill"`
	ResumedAt  int64         `json:"resumed_at"`
	Reread     []int64       `json:"reread"`
	Skipped    []int64       `json:"skipped"`
	Guarantee  string        `json:"guarantee"`
}

// Run demonstrates each style in turn.
func Run(ctx context.Context, cfg brewkit.Config, c Config, styles []Style, say func(string)) ([]Row, error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var rows []Row
	for _, s := range styles {
		topic, drop, err := brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: fmt.Sprintf("brew.commits.%s.", s), Partitions: 1})
		if err != nil {
			return rows, err
		}
		r, err := runStyle(ctx, cfg, cl, c, s, topic, say)
		drop(ctx)                                          //nolint:errcheck // a leftover demo topic is harmless
		adm.DeleteGroup(context.WithoutCancel(ctx), topic) //nolint:errcheck // and so is its group
		if err != nil {
			return rows, fmt.Errorf("%s: %w", s, err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func runStyle(ctx context.Context, cfg brewkit.Config, cl *kgo.Client, c Config, s Style, topic string, say func(string)) (Row, error) {
	row := Row{Style: s, Guarantee: s.Guarantee()}
	rng := rand.New(rand.NewPCG(1, 6))
	recs := make([]*kgo.Record, c.Records)
	for i := range recs {
		recs[i] = brewkit.NewOrder(rng, int64(i+1), time.Now()).Record(topic)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return row, fmt.Errorf("writing the orders: %w", err)
	}

	group := topic
	first, killed, err := consume(ctx, cfg, c.Consumer, "-group", group, "-topic", topic, "-style", string(s), "-crash-after", strconv.Itoa(c.CrashAfter))
	if err != nil {
		return row, err
	}
	if !killed {
		return row, errors.New("the first consumer was not killed: it ended on its own")
	}
	row.Commits, row.Waited = len(first.commits), first.waited
	row.BeforeKill = len(first.offsets)
	say(fmt.Sprintf("%s: consumer killed (SIGKILL) after %d records and %d commits; starting it again", s, row.BeforeKill, row.Commits))
	start := time.Now()
	second, killed, err := consume(ctx, cfg, c.Consumer, "-group", group, "-topic", topic, "-style", string(s), "-until", strconv.Itoa(c.Records))
	if err != nil {
		return row, err
	}
	if killed || len(second.offsets) == 0 {
		return row, errors.New("the restarted consumer did not finish the topic")
	}
	row.ResumedAt = second.offsets[0]
	say(fmt.Sprintf("%s: restarted consumer resumed at offset %d and read to the end in %s (the group waited for the dead member's session to time out)",
		s, row.ResumedAt, time.Since(start).Round(100*time.Millisecond)))
	for o := range int64(c.Records) {
		in1, in2 := slices.Contains(first.offsets, o), slices.Contains(second.offsets, o)
		switch {
		case in1 && in2:
			row.Reread = append(row.Reread, o)
		case !in1 && !in2:
			row.Skipped = append(row.Skipped, o)
		}
	}
	return row, nil
}

type steps struct {
	offsets []int64
	commits map[int64]bool // the offsets commits confirmed
	waited  time.Duration
}

// consume runs one consumer process to its end and collects what it reported;
// killed says it ended by SIGKILL.
func consume(ctx context.Context, cfg brewkit.Config, command []string, args ...string) (steps, bool, error) {
	st := steps{commits: map[int64]bool{}}
	cmd := brewkit.Command(ctx, cfg, command, args...)
	var stderr bytes.Buffer // the consumer writes there only as it ends
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return st, false, err
	}
	if err := cmd.Start(); err != nil {
		return st, false, fmt.Errorf("starting the consumer: %w", err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var s Step
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			continue
		}
		switch s.Kind {
		case "processed":
			st.offsets = append(st.offsets, s.Offset)
		case "commit":
			st.commits[s.Offset] = true
		case "waited":
			st.waited += s.Took
		}
	}
	err = cmd.Wait()
	if err != nil && !brewkit.Crashed(err) {
		// Its own one-line message, not a second line beside ours.
		return st, false, groups.ProcessError("the consumer", err, stderr.Bytes())
	}
	os.Stderr.Write(stderr.Bytes()) //nolint:errcheck // whatever else it said
	return st, brewkit.Crashed(err), nil
}

// Print writes the table.
func Print(w io.Writer, rows []Row) {
	t := brewkit.NewTable(w, "STYLE", "COMMITS", "WAITED", "PROCESSED", "RESUMED AT", "RE-READ", "SKIPPED", "GUARANTEE")
	for _, r := range rows {
		t.Row(r.Style, r.Commits, r.Waited.Round(100*time.Microsecond), r.BeforeKill, r.ResumedAt, span(r.Reread), span(r.Skipped), r.Guarantee)
	}
	t.Flush()
}

// span writes offsets as how many and which: "15 (20-34)", "2 (7, 9)".
func span(offs []int64) string {
	if len(offs) == 0 {
		return "0"
	}
	var runs []string
	for i := 0; i < len(offs); {
		j := i
		for j+1 < len(offs) && offs[j+1] == offs[j]+1 {
			j++
		}
		if i == j {
			runs = append(runs, strconv.FormatInt(offs[i], 10))
		} else {
			runs = append(runs, fmt.Sprintf("%d-%d", offs[i], offs[j]))
		}
		i = j + 1
	}
	return fmt.Sprintf("%d (%s)", len(offs), strings.Join(runs, ", "))
}

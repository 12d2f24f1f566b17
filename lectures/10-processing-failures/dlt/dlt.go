// Package dlt reads courier-service's dead-letter topic: what died, why, how
// many, since when, with the headers the courier wrote; and replays selected
// dead letters to the orders topic once their cause is fixed.
//
// A replay is idempotent twice over. The replay group's committed offset on
// the dead-letter topic remembers what was replayed, so a second replay
// writes nothing; and a record replayed twice all the same (-again, or a
// crash between the write and the commit) is booked with the order id as the
// idempotency key, so the partner does not book it twice.
package dlt

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/10-processing-failures/retrytopics"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Letter is one dead letter.
type Letter struct {
	Partition    int32              `json:"partition"`
	Offset       int64              `json:"offset"`
	Key          string             `json:"key"`
	Run          string             `json:"run"` // the run whose order it is (its key's prefix)
	At           time.Time          `json:"at"`  // when it was dead-lettered
	Error        string             `json:"error"`
	Kind         string             `json:"kind"`
	Attempts     int                `json:"attempts"`
	Origin       retrytopics.Origin `json:"origin"`
	FirstFailure time.Time          `json:"first_failure"`
	Headers      []kgo.RecordHeader `json:"-"`
	Value        []byte             `json:"-"`
}

// RunOf is the run an order id belongs to: retry-123456-0007 is run
// retry-123456's ("" when the key is not an order id of a run).
func RunOf(key string) string {
	i := strings.LastIndexByte(key, '-')
	if i <= 0 {
		return ""
	}
	if _, err := strconv.Atoi(key[i+1:]); err != nil {
		return ""
	}
	return key[:i]
}

func letterOf(r *kgo.Record) Letter {
	l := Letter{Partition: r.Partition, Offset: r.Offset, Key: string(r.Key), Run: RunOf(string(r.Key)),
		At: r.Timestamp, Headers: r.Headers, Value: r.Value}
	for _, h := range r.Headers {
		v := string(h.Value)
		switch h.Key {
		case retrytopics.HeaderError:
			l.Error = v
		case retrytopics.HeaderKind:
			l.Kind = v
		case retrytopics.HeaderAttempts:
			l.Attempts, _ = strconv.Atoi(v)
		case retrytopics.HeaderTopic:
			l.Origin.Topic = v
		case retrytopics.HeaderPartition:
			p, _ := strconv.ParseInt(v, 10, 32)
			l.Origin.Partition = int32(p)
		case retrytopics.HeaderOffset:
			l.Origin.Offset, _ = strconv.ParseInt(v, 10, 64)
		case retrytopics.HeaderFirstFailure:
			l.FirstFailure, _ = time.Parse(time.RFC3339Nano, v)
		}
	}
	if l.Error == "" {
		l.Error = "(no error header)"
	}
	return l
}

// Read returns every dead letter in topic, in each partition's order, and
// the topic's end offsets when it read. It creates the courier's topics
// first when they do not exist yet.
func Read(ctx context.Context, cfg brewkit.Config, topic string) ([]Letter, map[int32]int64, error) {
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	defer cl.Close()
	if _, err := brewkit.EnsureTopics(ctx, adm, retrytopics.CourierTopics(retrytopics.DefaultDelays).Specs()...); err != nil {
		return nil, nil, err
	}
	ends, err := brewkit.EndOffsets(ctx, adm, topic)
	if err != nil {
		return nil, nil, err
	}
	end := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { end[o.Partition] = o.Offset })
	var out []Letter
	err = brewkit.ReadTo(ctx, cfg, topic, nil, ends, time.Minute, func(r *kgo.Record) { out = append(out, letterOf(r)) })
	return out, end, err
}

// Latest is the run of the newest dead letter ("" when there is none).
func Latest(ls []Letter) string {
	var newest Letter
	for _, l := range ls {
		if l.Run != "" && (newest.Run == "" || l.At.After(newest.At)) {
			newest = l
		}
	}
	return newest.Run
}

// All is the -run that takes every run's dead letters.
const All = "all"

// OfRun returns the dead letters of run (All: every one).
func OfRun(ls []Letter, run string) []Letter {
	if run == All {
		return ls
	}
	var out []Letter
	for _, l := range ls {
		if l.Run == run {
			out = append(out, l)
		}
	}
	return out
}

// Group is the dead letters of one error.
type Group struct {
	Error          string    `json:"error"`
	Kind           string    `json:"kind"`
	Count          int       `json:"count"`
	Oldest, Newest time.Time `json:"-"`
	Example        Letter    `json:"example"` // the oldest
}

// Groups groups dead letters by error, the largest group first.
func Groups(ls []Letter) []Group {
	var gs []Group
	at := map[string]int{}
	for _, l := range ls {
		k := l.Kind + "\x00" + l.Error
		i, ok := at[k]
		if !ok {
			i = len(gs)
			at[k] = i
			gs = append(gs, Group{Error: l.Error, Kind: l.Kind, Oldest: l.At, Newest: l.At, Example: l})
		}
		g := &gs[i]
		g.Count++
		if l.At.Before(g.Oldest) {
			g.Oldest, g.Example = l.At, l
		}
		if l.At.After(g.Newest) {
			g.Newest = l.At
		}
	}
	slices.SortStableFunc(gs, func(a, b Group) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Error, b.Error)
	})
	return gs
}

// Inspection is what `dlt` shows.
type Inspection struct {
	Topic   string   `json:"topic"`
	Total   int      `json:"total"` // every run's dead letters
	Run     string   `json:"run"`   // whose are shown (All: every run's)
	Letters []Letter `json:"letters"`
	Groups  []Group  `json:"groups"`
}

// Inspect reads topic's dead letters and groups those of run by error; run
// "" takes the run of the newest dead letter, All every run.
func Inspect(ctx context.Context, cfg brewkit.Config, topic, run string) (Inspection, error) {
	in := Inspection{Topic: topic, Run: run}
	ls, _, err := Read(ctx, cfg, topic)
	if err != nil {
		return in, err
	}
	in.Total = len(ls)
	if in.Run == "" {
		in.Run = Latest(ls)
	}
	in.Letters = OfRun(ls, in.Run)
	in.Groups = Groups(in.Letters)
	return in, nil
}

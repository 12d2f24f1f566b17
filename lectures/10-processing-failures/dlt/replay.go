package dlt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/10-processing-failures/courier"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/lectures/10-processing-failures/retrytopics"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// The headers a replayed record carries in the orders topic (the courier's
// retry headers are dropped: it starts afresh).
const (
	HeaderReplay       = "replay"        // the replay's name; its courier books what carries it
	HeaderReplayedFrom = "replayed.from" // the dead letter: topic/partition@offset
)

// The kinds a replay selects by (the error.kind header), and all.
const (
	KindRetriable = "retriable"
	KindPoison    = "poison"
	KindAll       = "all"
)

// Replay is which dead letters to replay.
type Replay struct {
	Topics retrytopics.Topics
	Run    string // "" the newest dead letter's run, All every run
	Kind   string // KindRetriable, KindPoison or KindAll
	Error  string // and whose error contains this ("" any)
	// Again replays what the replay group has replayed before too.
	Again bool
	// Book runs a courier on the replayed records until each is booked
	// or dead-lettered again (the demo has no courier running beside it).
	Book  bool
	Limit time.Duration // the booking's bound
}

// Selects reports whether the replay takes l.
func (rp Replay) Selects(l Letter) bool {
	return (rp.Kind == KindAll || l.Kind == rp.Kind) && strings.Contains(l.Error, rp.Error)
}

// Group is the replay group whose committed offsets on the dead-letter topic
// say how far this selection of run's dead letters has been replayed. One
// offset per partition cannot say "replayed some, passed over others", so
// each selection has its own group: a replay of the poison letters after one
// of the retriable ones still finds them.
func (rp Replay) Group(run string) string {
	g := "brew.courier.dlt-replay." + run + "." + rp.Kind
	if rp.Error != "" {
		g += "." + strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
				return r
			}
			return '_'
		}, rp.Error)
	}
	return g
}

// ReplayResult is what a replay did, and what the partner's log says of the
// orders it selects.
type ReplayResult struct {
	Replay    Replay            `json:"replay"`
	Run       string            `json:"run"`
	Group     string            `json:"group"`
	Letters   int               `json:"letters"`  // the run's dead letters
	Selected  int               `json:"selected"` // those the filter takes
	Before    int               `json:"before"`   // of them, replayed before by the group (not again)
	Replayed  int               `json:"replayed"` // written to the orders topic now
	BookGroup string            `json:"book_group,omitempty"`
	Stats     retrytopics.Stats `json:"stats"`
	// The selected dead letters' orders, and the partner's log for them.
	OrderIDs []string       `json:"order_ids"`
	New      int            `json:"new"` // bookings the partner made for them during this replay
	Times    map[string]int `json:"times"`
	Doubles  []string       `json:"doubles"`
	Unbooked []string       `json:"unbooked"` // retriable ones the log has no booking of
}

// RunReplay replays the selected dead letters the replay group has not
// replayed yet (Again: all of them) to the orders topic, commits the group at
// the end of the dead-letter topic, and, with Book, books them with a
// courier of a fresh group.
func RunReplay(ctx context.Context, cfg brewkit.Config, rp Replay, pc *partner.Client, say func(string)) (ReplayResult, error) {
	res := ReplayResult{Replay: rp}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	ls, ends, err := Read(ctx, cfg, rp.Topics.DLT)
	if err != nil {
		return res, err
	}
	res.Run = rp.Run
	if res.Run == "" {
		if res.Run = Latest(ls); res.Run == "" {
			return res, fmt.Errorf("%s holds no dead letter of a run to replay", rp.Topics.DLT)
		}
	}
	res.Group = rp.Group(res.Run)
	ls = OfRun(ls, res.Run)
	res.Letters = len(ls)

	var from map[int32]int64 // what the group has replayed: up to its committed offsets
	if !rp.Again {
		if from, err = replayedTo(ctx, adm, res.Group, rp.Topics.DLT); err != nil {
			return res, err
		}
	}
	todo := res.pick(ls, from)
	before, err := pc.Log(ctx)
	if err != nil {
		return res, err
	}

	name := retrytopics.NewRun("replay")
	if len(todo) > 0 && rp.Book {
		// The booking courier's group starts where the replayed records
		// will begin, before they are written.
		res.BookGroup = "brew.courier." + name
		if err := retrytopics.StartAtEnd(ctx, adm, res.BookGroup, rp.Topics.Read()...); err != nil {
			return res, err
		}
	}
	if len(todo) > 0 {
		if err := writeBack(ctx, cl, todo, rp.Topics, name); err != nil {
			return res, err
		}
		res.Replayed = len(todo)
	}
	// Remembered only once written: a crash before the commit replays
	// them again, and the idempotency key keeps that from booking twice.
	if err := remember(ctx, adm, res.Group, rp.Topics.DLT, ends); err != nil {
		return res, err
	}

	if res.BookGroup != "" {
		say(fmt.Sprintf("replayed %d dead letters; the courier of group %s books them", res.Replayed, res.BookGroup))
		if err := res.book(ctx, cfg, adm, pc, name, say); err != nil {
			return res, err
		}
	}

	after, err := pc.Log(ctx)
	if err != nil {
		return res, err
	}
	res.tally(ls, before, after)
	return res, nil
}

// replayedTo is how far group has replayed topic: its committed offset of
// each partition (none when it never committed).
func replayedTo(ctx context.Context, adm *kadm.Client, group, topic string) (map[int32]int64, error) {
	offs, err := adm.FetchOffsets(ctx, group)
	if err == nil {
		err = offs.Error()
	}
	if errors.Is(err, kerr.GroupIDNotFound) {
		err = nil // the simulation's answer for a group never committed; Kafka's is no offsets
	}
	if err != nil {
		return nil, fmt.Errorf("reading what group %s has replayed: %w", group, err)
	}
	from := map[int32]int64{}
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic {
			from[o.Partition] = o.At
		}
	})
	return from, nil
}

// pick returns the letters of ls the replay selects and the group has not
// replayed (below from), and counts them in res: how many it selects, of
// which orders, how many were replayed before.
func (res *ReplayResult) pick(ls []Letter, from map[int32]int64) []Letter {
	var todo []Letter
	seen := map[string]bool{}
	for _, l := range ls {
		if !res.Replay.Selects(l) {
			continue
		}
		res.Selected++
		if !seen[l.Key] {
			seen[l.Key] = true
			res.OrderIDs = append(res.OrderIDs, l.Key)
		}
		if at, ok := from[l.Partition]; ok && l.Offset < at {
			res.Before++
			continue
		}
		todo = append(todo, l)
	}
	return todo
}

// writeBack writes the letters to the orders topic as new records (see
// replayed), all of them or an error.
func writeBack(ctx context.Context, cl *kgo.Client, ls []Letter, t retrytopics.Topics, name string) error {
	recs := make([]*kgo.Record, 0, len(ls))
	for _, l := range ls {
		recs = append(recs, replayed(l, t, name))
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("replaying %d dead letters to %s: %w", len(recs), t.Orders, err)
	}
	return nil
}

// remember commits group at ends, the end offsets of the dead-letter topic
// when it was read: the next replay of the group starts after them.
func remember(ctx context.Context, adm *kadm.Client, group, topic string, ends map[int32]int64) error {
	if len(ends) == 0 {
		return nil
	}
	done := kadm.Offsets{}
	for p, o := range ends {
		done.AddOffset(topic, p, o, -1)
	}
	resp, err := adm.CommitOffsets(ctx, group, done)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("remembering the replay in group %s: %w", group, err)
	}
	return nil
}

// book runs a courier of group res.BookGroup on what the replay named name
// wrote, until each record is booked or dead-lettered again, or the
// replay's Limit passes; the group is dropped after.
func (res *ReplayResult) book(ctx context.Context, cfg brewkit.Config, adm *kadm.Client, pc *partner.Client, name string, say func(string)) error {
	c := retrytopics.Courier{Topics: res.Replay.Topics, Group: res.BookGroup, Booker: courier.Booker{Partner: pc, Idempotent: true},
		Accept: func(r *kgo.Record) bool { return header(r, HeaderReplay) == name }, Expect: res.Replayed, Say: say}
	lctx, cancel := context.WithTimeout(ctx, res.Replay.Limit)
	defer cancel()
	var err error
	res.Stats, err = c.Run(lctx, cfg)
	retrytopics.DropGroup(ctx, adm, res.BookGroup)
	if err != nil && ctx.Err() == nil && lctx.Err() != nil {
		err = fmt.Errorf("%d of %d replayed records neither booked nor dead-lettered again after %s", res.Replayed-res.Stats.Resolved, res.Replayed, res.Replay.Limit)
	}
	return err
}

// replayed is dead letter l as a new record of the orders topic: its key,
// value and the event's own headers, marked with the replay's name and where
// it died; the retry headers stay behind.
func replayed(l Letter, t retrytopics.Topics, name string) *kgo.Record {
	var hs []kgo.RecordHeader
	for _, h := range l.Headers {
		switch h.Key {
		case retrytopics.HeaderError, retrytopics.HeaderKind, retrytopics.HeaderAttempts, retrytopics.HeaderTopic, retrytopics.HeaderPartition,
			retrytopics.HeaderOffset, retrytopics.HeaderFirstFailure, retrytopics.HeaderParked, HeaderReplay, HeaderReplayedFrom:
			continue
		}
		hs = append(hs, h)
	}
	hs = append(hs,
		kgo.RecordHeader{Key: HeaderReplay, Value: []byte(name)},
		kgo.RecordHeader{Key: HeaderReplayedFrom, Value: []byte(retrytopics.Origin{Topic: t.DLT, Partition: l.Partition, Offset: l.Offset}.String())})
	return &kgo.Record{Topic: t.Orders, Key: []byte(l.Key), Value: l.Value, Headers: hs}
}

func header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

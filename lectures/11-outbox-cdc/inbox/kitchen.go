package inbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Mode is how kitchen-service handles an event that comes again.
type Mode string

// The two kitchens.
const (
	// OffsetsOnly cooks each record in a database transaction and commits
	// the Kafka offset after: all it has against a repeat is the offset.
	OffsetsOnly Mode = "offsets"
	// WithInbox stores each event's id in the inbox table in the same
	// transaction as the ticket, and skips an event whose id is there.
	WithInbox Mode = "inbox"
)

// Modes are the two, in the README's order.
var Modes = []Mode{OffsetsOnly, WithInbox}

// Says is the mode in the README's words.
func (m Mode) Says() string {
	if m == WithInbox {
		return "inbox"
	}
	return "offsets only"
}

// DDL is kitchen-service's schema: its tickets and its inbox. Both kitchens
// of the demo share it, each rows of its own (kitchen, consumer).
var DDL = []string{
	`CREATE TABLE tickets (
	id        bigserial   PRIMARY KEY,
	kitchen   text        NOT NULL,
	order_id  text        NOT NULL,
	shop_id   text        NOT NULL,
	items     text[]      NOT NULL,
	event_id  uuid        NOT NULL,
	cooked_at timestamptz NOT NULL DEFAULT now())`,
	`CREATE TABLE inbox (
	consumer     text        NOT NULL,
	event_id     uuid        NOT NULL,
	processed_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (consumer, event_id))`,
}

// Kitchen is one kitchen-service process: a consumer in Group that cooks
// the orders of Topic into tickets until its group's committed offsets reach
// the topic's end offsets as they were when it started.
type Kitchen struct {
	Mode          Mode
	Schema, Topic string
	Group         string
	Batch         int       // records per poll
	KillAfter     int       // > 0: SIGKILL after the database commit of the batch that brings its records to this many, before the offset commit
	Report        io.Writer // one JSON line per batch (Batch)
	Kill          func()    // brewkit.Crash unless set
}

// Batch is what a kitchen did with one poll's records, reported after the
// database commit (so a killed kitchen's last batch is reported too).
type Batch struct {
	Read    int  `json:"read"`
	Cooked  int  `json:"cooked"`
	Skipped int  `json:"skipped"` // by the inbox
	Killed  bool `json:"killed,omitempty"`
}

// Cook runs k.
func Cook(ctx context.Context, cfg brewkit.Config, k Kitchen) error {
	p, err := db.ConnectIn(ctx, k.Schema)
	if err != nil {
		return err
	}
	defer p.Close()
	left, err := unread(ctx, cfg, k.Topic, k.Group)
	if err != nil {
		return err
	}
	cl, err := brewkit.NewClient(cfg,
		kgo.ConsumerGroup(k.Group), kgo.ConsumeTopics(k.Topic),
		kgo.InstanceID("kitchen-1"), // static: a restarted kitchen takes its place at once, no session timeout to wait
		kgo.SessionTimeout(6*time.Second), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.KeepRetryableFetchErrors())
	if err != nil {
		return err
	}
	defer cl.Close()
	kill := k.Kill
	if kill == nil {
		kill = brewkit.Crash
	}
	report := json.NewEncoder(io.Discard)
	if k.Report != nil {
		report = json.NewEncoder(k.Report)
	}
	var fc brewkit.FetchCheck
	read := 0
	for len(left) > 0 {
		fs, err := fc.Poll(ctx, cl, k.Batch)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return err
		}
		recs := fs.Records()
		if len(recs) == 0 {
			continue
		}
		var b Batch
		err = pgx.BeginFunc(ctx, p, func(tx pgx.Tx) (err error) {
			b, err = k.cook(ctx, tx, recs)
			return err
		})
		if err != nil {
			return fmt.Errorf("cooking: %w", err)
		}
		read += len(recs)
		if k.KillAfter > 0 && read >= k.KillAfter {
			b.Killed = true
			report.Encode(b) //nolint:errcheck // the parent reads it
			kill()           // the tickets are committed, the offsets are not
		}
		report.Encode(b) //nolint:errcheck // the parent reads it
		if err := cl.CommitRecords(ctx, recs...); err != nil {
			return fmt.Errorf("committing offsets: %w", err)
		}
		for _, r := range recs {
			if end, ok := left[r.Partition]; ok && r.Offset+1 >= end {
				delete(left, r.Partition)
			}
		}
	}
	return nil
}

// unread is, for each partition of topic that group has not read to its
// end yet, the end offset it reads to.
func unread(ctx context.Context, cfg brewkit.Config, topic, group string) (map[int32]int64, error) {
	cl, err := brewkit.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := brewkit.EndOffsets(ctx, adm, topic)
	if err != nil {
		return nil, err
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("the offsets of group %s: %w", group, err)
	}
	left := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if c, ok := committed.Lookup(topic, o.Partition); !ok || c.At < o.Offset {
			left[o.Partition] = o.Offset
		}
	})
	return left, nil
}

// cook makes a ticket of each record in tx; WithInbox first records the
// event's id in the inbox, and skips an event it already holds.
func (k Kitchen) cook(ctx context.Context, tx pgx.Tx, recs []*kgo.Record) (Batch, error) {
	b := Batch{Read: len(recs)}
	for _, r := range recs {
		ev, err := brewkit.DecodeEvent(r)
		if err != nil {
			return b, err
		}
		id := drill.EventID(r)
		if id == "" {
			return b, fmt.Errorf("%s/%d@%d has no %s header", r.Topic, r.Partition, r.Offset, drill.HeaderEventID)
		}
		if k.Mode == WithInbox {
			tag, err := tx.Exec(ctx, `INSERT INTO inbox (consumer, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, k.Group, id)
			if err != nil {
				return b, err
			}
			if tag.RowsAffected() == 0 {
				b.Skipped++ // processed before: the ticket is there
				continue
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO tickets (kitchen, order_id, shop_id, items, event_id) VALUES ($1, $2, $3, $4, $5)`,
			string(k.Mode), ev.OrderID, ev.ShopID, ev.Items, id); err != nil {
			return b, err
		}
		b.Cooked++
	}
	return b, nil
}

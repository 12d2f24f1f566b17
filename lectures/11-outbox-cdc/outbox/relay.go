package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Relay is one relay process.
type Relay struct {
	Schema, Topic string
	Batch         int           // rows per transaction
	Poll          time.Duration // the wait after a poll that found nothing
	UntilEmpty    bool          // stop at the first poll that finds nothing
	NoLock        bool          // SELECT without FOR UPDATE SKIP LOCKED: two relays send the same rows
	Kills         []PlannedKill // the drill's plan, shared by every relay
	Fired         string        // a folder: each kill fires once, in whichever relay takes its row
	Report        io.Writer     // one JSON line per batch (Report)
	Kill          func()        // brewkit.Crash unless set
}

// PlannedKill kills the relay that takes outbox row ID, at Stage.
type PlannedKill struct {
	Stage Stage
	ID    int64
}

// ParseKills reads a plan, "stage:id,stage:id".
func ParseKills(s string) ([]PlannedKill, error) {
	var out []PlannedKill
	for _, item := range strings.Split(s, ",") {
		if item == "" {
			continue
		}
		st, id, ok := strings.Cut(item, ":")
		n, err := strconv.ParseInt(id, 10, 64)
		if !ok || err != nil || !Stage(st).Resends() && Stage(st) != Locked {
			return nil, fmt.Errorf("%q is not stage:id with a relay's stage (locked, acked, deleted)", item)
		}
		out = append(out, PlannedKill{Stage: Stage(st), ID: n})
	}
	return out, nil
}

// Stats is what a relay did.
type Stats struct {
	Batches, Events int
}

// Row is an outbox row.
type Row struct {
	ID      int64
	EventID string
	Key     string // the order id: the record's key
	Type    string
	Payload []byte
}

// LockBatch selects up to n outbox rows, oldest first, in tx, and locks
// them until tx ends; rows another transaction has locked are skipped, not
// waited for (FOR UPDATE SKIP LOCKED). noLock selects without locking:
// what two relays then take.
func LockBatch(ctx context.Context, tx pgx.Tx, n int, noLock bool) ([]Row, error) {
	q := `SELECT id, event_id::text, aggregate_id, type, payload::text FROM outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`
	if noLock {
		q = `SELECT id, event_id::text, aggregate_id, type, payload::text FROM outbox ORDER BY id LIMIT $1`
	}
	rows, err := tx.Query(ctx, q, n)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Row, error) {
		var o Row
		var payload string
		err := row.Scan(&o.ID, &o.EventID, &o.Key, &o.Type, &payload)
		o.Payload = []byte(payload)
		return o, err
	})
}

// RunRelay publishes the outbox until ctx ends (or, with UntilEmpty, the
// outbox is empty). Each batch is one transaction: lock up to Batch rows
// (oldest first, skipping rows another relay has locked), produce them and
// wait for every acknowledgement, delete them, commit. A relay that dies
// anywhere before the commit leaves the rows where they were, for itself or
// another relay to send again.
func RunRelay(ctx context.Context, cfg brewkit.Config, r Relay) (Stats, error) {
	var st Stats
	p, err := db.ConnectIn(ctx, r.Schema)
	if err != nil {
		return st, err
	}
	defer p.Close()
	// franz-go's producer is idempotent by default (acks=all): its own
	// retries never duplicate or reorder a partition's records.
	cl, err := brewkit.NewClient(cfg, kgo.DefaultProduceTopic(r.Topic))
	if err != nil {
		return st, err
	}
	defer cl.Close()
	kill := r.Kill
	if kill == nil {
		kill = brewkit.Crash
	}
	report := func(rep Report) {
		if r.Report != nil {
			json.NewEncoder(r.Report).Encode(rep) //nolint:errcheck // the parent reads it
		}
	}
	for ctx.Err() == nil {
		n := 0
		err := pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error {
			batch, err := LockBatch(ctx, tx, r.Batch, r.NoLock)
			if err != nil || len(batch) == 0 {
				return err
			}
			planned := r.plannedIn(batch)
			at := func(s Stage) {
				if planned != nil && planned.Stage == s {
					report(Report{Events: len(batch), Killed: string(s), At: planned.ID})
					kill()
				}
			}
			at(Locked)
			recs := make([]*kgo.Record, len(batch))
			ids := make([]int64, len(batch))
			for i, o := range batch {
				recs[i] = o.Record(r.Topic)
				ids[i] = o.ID
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				// Some may be in Kafka: the rows stay, and go again.
				return fmt.Errorf("producing %d outbox rows: %w", len(recs), err)
			}
			at(Acked)
			if _, err := tx.Exec(ctx, `DELETE FROM outbox WHERE id = ANY($1)`, ids); err != nil {
				return err
			}
			at(Deleted)
			n = len(batch)
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return st, err
		}
		if n > 0 {
			st.Batches++
			st.Events += n
			report(Report{Events: n})
			continue
		}
		if r.UntilEmpty {
			return st, nil
		}
		if err := brewkit.Sleep(ctx, r.Poll); err != nil {
			break
		}
	}
	return st, nil
}

// plannedIn returns the first planned kill in batch that has not fired,
// and marks it fired; nil when there is none.
func (r Relay) plannedIn(batch []Row) *PlannedKill {
	in := map[int64]bool{}
	for _, o := range batch {
		in[o.ID] = true
	}
	for _, k := range r.Kills {
		if !in[k.ID] {
			continue
		}
		f, err := os.OpenFile(filepath.Join(r.Fired, strconv.FormatInt(k.ID, 10)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil
		}
		f.Close()
		return &k
	}
	return nil
}

// Record is the row as the relay publishes it: keyed by the order id, the
// payload as it is, the event's type and id in headers.
func (o Row) Record(topic string) *kgo.Record {
	return &kgo.Record{Topic: topic, Key: []byte(o.Key), Value: o.Payload, Headers: []kgo.RecordHeader{
		{Key: "type", Value: []byte(o.Type)}, {Key: drill.HeaderEventID, Value: []byte(o.EventID)}}}
}

// Package cdc is order-service's outbox read from PostgreSQL's write-ahead
// log instead of polled: a Go reader of a logical replication slot
// (pgoutput, a publication on the outbox table) publishes each committed
// outbox row to Kafka in commit order with an idempotent producer, and
// acknowledges the slot's LSN only after Kafka acknowledged the records. The
// demo kills the reader with SIGKILL at seeded points (nothing is lost, the
// duplicates are counted), measures the WAL the slot holds while the reader
// is down, and drops the slot the safe way.
package cdc

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// DDL is order-service's two tables: the orders, and the outbox in the
// shape Debezium's outbox event router expects by default (id, aggregatetype,
// aggregateid, type, payload), so that the cdc reader and Debezium read the
// same rows.
var DDL = []string{`CREATE TABLE orders (
	run         text        NOT NULL,
	order_id    text        NOT NULL,
	shop_id     text        NOT NULL,
	items       text[]      NOT NULL,
	total_cents bigint      NOT NULL,
	placed_at   timestamptz NOT NULL,
	PRIMARY KEY (run, order_id))`,
	`CREATE TABLE outbox (
	id            uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
	aggregatetype text        NOT NULL,
	aggregateid   text        NOT NULL,
	type          text        NOT NULL,
	payload       jsonb       NOT NULL,
	created_at    timestamptz NOT NULL DEFAULT clock_timestamp())`}

// AggregateType is the outbox rows' aggregatetype: what the event is about.
const AggregateType = "order"

// Written is one order that committed.
type Written struct {
	N         int       // its number in the run
	OrderID   string    // the aggregate id, the record's key
	EventID   string    // the outbox row's id
	Committed time.Time // when COMMIT returned
}

// Writes is order-service placing orders: each order's row and its outbox
// row in one transaction.
type Writes struct {
	Schema   string
	Run      string
	Seed     uint64
	From, To int           // orders From..To-1
	Every    time.Duration // the pace: one order every Every (0: as fast as it goes)
	// Written, when set, gets each order once it committed.
	Written func(Written)
}

// Write places the orders of w on p (a pool whose search_path is w.Schema)
// and returns them in commit order.
func Write(ctx context.Context, p *pgxpool.Pool, w Writes) ([]Written, error) {
	var out []Written
	next := time.Now()
	for n := w.From; n < w.To; n++ {
		if w.Every > 0 {
			if err := brewkit.Sleep(ctx, time.Until(next)); err != nil {
				return out, err
			}
			next = next.Add(w.Every)
		}
		got, err := Place(ctx, p, drill.Order(w.Seed, w.Run, n))
		if err != nil {
			return out, err
		}
		got.N = n
		out = append(out, got)
		if w.Written != nil {
			w.Written(got)
		}
	}
	return out, nil
}

// Place writes ev's order and its outbox row in one transaction.
func Place(ctx context.Context, p *pgxpool.Pool, ev brewkit.Event) (Written, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return Written{}, err
	}
	w := Written{N: int(ev.Seq), OrderID: ev.OrderID}
	err = pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO orders (run, order_id, shop_id, items, total_cents, placed_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, ev.Run, ev.OrderID, ev.ShopID, ev.Items, ev.Cents, ev.At); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `INSERT INTO outbox (aggregatetype, aggregateid, type, payload)
			VALUES ($1, $2, $3, $4) RETURNING id::text`, AggregateType, ev.OrderID, string(ev.Type), payload).Scan(&w.EventID)
	})
	if err != nil {
		return w, fmt.Errorf("placing %s: %w", ev.OrderID, err)
	}
	w.Committed = time.Now()
	return w, nil
}

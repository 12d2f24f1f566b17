package outbox

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Writer is one order-service process: it writes orders From..To-1, each
// with its outbox row in one transaction, and gets SIGKILL at KillStage of
// order KillAt (< 0: never).
type Writer struct {
	Schema, Run string
	Seed        uint64
	From, To    int
	KillAt      int
	KillStage   Stage
	Kill        func() // brewkit.Crash unless set
}

// WriteOrders runs w.
func WriteOrders(ctx context.Context, w Writer) error {
	p, err := db.ConnectIn(ctx, w.Schema)
	if err != nil {
		return err
	}
	defer p.Close()
	kill := w.Kill
	if kill == nil {
		kill = brewkit.Crash
	}
	for n := w.From; n < w.To; n++ {
		ev := drill.Order(w.Seed, w.Run, n)
		at := func(s Stage) {
			if n == w.KillAt && s == w.KillStage {
				kill()
			}
		}
		err := pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error {
			if err := PlaceOrder(ctx, tx, ev, at); err != nil {
				return err
			}
			at(BeforeCommit)
			return nil
		})
		if err != nil {
			return fmt.Errorf("order %s: %w", ev.OrderID, err)
		}
	}
	return nil
}

// PlaceOrder writes the order and its OrderPlaced event to the outbox in
// tx: the one write order-service makes. at is called after the order's
// INSERT (AfterOrder).
func PlaceOrder(ctx context.Context, tx pgx.Tx, ev brewkit.Event, at func(Stage)) error {
	if _, err := tx.Exec(ctx, `INSERT INTO orders (order_id, run, shop_id, items, total_cents, placed_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, ev.OrderID, ev.Run, ev.ShopID, ev.Items, ev.Cents, ev.At); err != nil {
		return err
	}
	if at != nil {
		at(AfterOrder)
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO outbox (aggregate_id, type, payload) VALUES ($1, $2, $3)`,
		ev.OrderID, string(ev.Type), payload)
	return err
}

// The reference solution of exercise 11/outboxrow.
package outboxrow

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// PlaceOrder writes both rows on one transaction: pgx.BeginFunc commits it
// when the function returns nil and rolls it back otherwise (and
// PostgreSQL rolls it back if the connection dies first), so the order and
// its event are in the tables together or not at all.
func PlaceOrder(ctx context.Context, p *pgxpool.Pool, ev brewkit.Event) error {
	payload, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO orders (order_id, run, shop_id, items, total_cents, placed_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, ev.OrderID, ev.Run, ev.ShopID, ev.Items, ev.Cents, ev.At); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO outbox (aggregate_id, type, payload) VALUES ($1, $2, $3)`,
			ev.OrderID, string(ev.Type), payload)
		return err
	})
}
